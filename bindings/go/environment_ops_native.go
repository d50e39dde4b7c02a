package fabric

/*
#include "fabric.h"
*/
import "C"

// environmentCall is one of the caller operations on an environment
// (fabric_environment_exec, _write_file, _read_file, _list): handle, request JSON, *out.
type environmentCall func(environment C.fabric_environment, request *C.char, out **C.char) C.int32_t

// nativeEnvironmentOperation runs one caller operation with request as its request_json.
func nativeEnvironmentOperation(fn environmentCall, environment uint64, request string) nativeResult {
	cRequest, err := cstring(request, "request")
	if err != nil {
		return errorResult(err)
	}
	defer free(cRequest)
	var out *C.char
	status := fn(C.fabric_environment(environment), cRequest, &out)
	return finish(status, out, 0)
}

func nativeEnvironmentExec(environment uint64, request string) nativeResult {
	return nativeEnvironmentOperation(func(e C.fabric_environment, r *C.char, out **C.char) C.int32_t {
		return C.fabric_environment_exec(e, r, out)
	}, environment, request)
}

func nativeEnvironmentWriteFile(environment uint64, request string) nativeResult {
	return nativeEnvironmentOperation(func(e C.fabric_environment, r *C.char, out **C.char) C.int32_t {
		return C.fabric_environment_write_file(e, r, out)
	}, environment, request)
}

func nativeEnvironmentReadFile(environment uint64, request string) nativeResult {
	return nativeEnvironmentOperation(func(e C.fabric_environment, r *C.char, out **C.char) C.int32_t {
		return C.fabric_environment_read_file(e, r, out)
	}, environment, request)
}

func nativeEnvironmentList(environment uint64, request string) nativeResult {
	return nativeEnvironmentOperation(func(e C.fabric_environment, r *C.char, out **C.char) C.int32_t {
		return C.fabric_environment_list(e, r, out)
	}, environment, request)
}
