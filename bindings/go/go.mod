module fabric

go 1.22
