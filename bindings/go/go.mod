module github.com/NVIDIA/fabric-core/bindings/go

go 1.22
