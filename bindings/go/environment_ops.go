package fabric

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"runtime"
)

// ExecResult is what Environment.Exec returns: exit code (nil when a signal or the deadline
// ended the command), stdout and stderr (each bounded, with truncation flags), timed_out and
// duration_ms.
type ExecResult = ExecOutput

// Exec runs request.Argv in the environment (never through a shell unless Argv names one):
// in request.Cwd relative to the workspace, with request.Env added and request.StdinHex as
// its input. Its whole process group is killed at the deadline (TimedOut); each output
// stream keeps OutputLimitBytes (StdoutTruncated, StderrTruncated). Zero TimeoutSeconds and
// OutputLimitBytes mean the defaults (60 s, 1 MiB). Works until the environment is released.
func (e *Environment) Exec(ctx context.Context, request ExecRequest) (*ExecResult, error) {
	result := &ExecResult{}
	return result, e.operate(ctx, nativeEnvironmentExec, request, result)
}

// WriteFile writes data (at most 16 MiB) to path beneath the workspace (root
// FileRootArtifacts: the artifact root); parents are created, links are never followed
// (path_refused). mode nil means 0644.
func (e *Environment) WriteFile(ctx context.Context, path string, data []byte, mode *uint32, root FileRoot) error {
	request := FileWriteRequest{Path: path, ContentHex: hex.EncodeToString(data), Mode: mode, Root: root}
	return e.operate(ctx, nativeEnvironmentWriteFile, request, &map[string]any{})
}

// ReadFile reads the regular file path beneath the workspace (or artifact root), at most
// maxBytes (0: 4 MiB); the FileContent says whether it was cut (Truncated). Links are never
// followed (path_refused); a missing file is file_not_found. Bytes decodes ContentHex.
func (e *Environment) ReadFile(ctx context.Context, path string, maxBytes uint64, root FileRoot) (*FileContent, error) {
	result := &FileContent{}
	return result, e.operate(ctx, nativeEnvironmentReadFile, FileReadRequest{Path: path, MaxBytes: maxBytes, Root: root}, result)
}

// Bytes decodes the content read.
func (c *FileContent) Bytes() ([]byte, error) { return hex.DecodeString(c.ContentHex) }

// List lists the directory path beneath the workspace (or artifact root); links are listed
// as "symlink", never followed.
func (e *Environment) List(ctx context.Context, path string, root FileRoot) (*FileListing, error) {
	result := &FileListing{}
	return result, e.operate(ctx, nativeEnvironmentList, FileListRequest{Path: path, Root: root}, result)
}

// operate runs one caller operation on its own goroutine (ctx abandons the wait, not the
// call) and decodes its result into v.
func (e *Environment) operate(ctx context.Context, call func(uint64, string) nativeResult, request any, v any) error {
	text, err := json.Marshal(request)
	if err != nil {
		return err
	}
	handle := e.handle
	result, err := await(ctx, func() nativeResult { return call(handle, string(text)) }, nil)
	runtime.KeepAlive(e)
	if err != nil {
		return err
	}
	return decodeInto(result, v)
}
