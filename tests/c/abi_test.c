/*
 * C ABI test program for include/fabric.h, linked against the static library.
 *
 * Build (done by fabric-ffi/tests/all/c_abi.rs):
 *   cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsanitize=address,undefined \
 *      -Iinclude tests/c/abi_test.c target/debug/libfabric_ffi.a -lpthread -ldl -lm
 * Run: abi_test <repository root>
 *
 * Covers the main flow (validate, plan, doctor, inspect, the options object, run on the scripted adapter,
 * runtime start/invoke/status/stop, environments, resource snapshots, health checks) and misuse (NULL arguments, invalid
 * UTF-8, use after free, double free, wrong handle kind, free(0)): every misuse must
 * return a status, never crash. ASan/UBSan/LSan also check that every library string is
 * released with fabric_string_free.
 */
#define _POSIX_C_SOURCE 200809L

#include "fabric.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (cond) {                                                                \
            passed++;                                                              \
        } else {                                                                   \
            failed++;                                                              \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
        }                                                                          \
    } while (0)

/* Checks status and that *out mentions `needle` (NULL: skip), then frees *out. */
static void expect(int32_t status, int32_t want, char *out, const char *needle, const char *what) {
    if (status != want) {
        failed++;
        fprintf(stderr, "FAIL %s: status %d, want %d; out=%s\n", what, (int)status, (int)want,
                out ? out : "(null)");
    } else if (out == NULL) {
        failed++;
        fprintf(stderr, "FAIL %s: out is NULL\n", what);
    } else if (needle != NULL && strstr(out, needle) == NULL) {
        failed++;
        fprintf(stderr, "FAIL %s: out lacks %s: %s\n", what, needle, out);
    } else {
        passed++;
    }
    fabric_string_free(out);
}

/* Runs CALL (which writes to the local `out`), then checks it with expect(). */
#define EXPECT(want, needle, what, CALL)          \
    do {                                          \
        char *out = NULL;                         \
        int32_t status_ = (CALL);                 \
        expect(status_, (want), out, needle, what); \
    } while (0)

static const char *root = ".";
static char config_json[4096];
/* The options object of every planning call: {"base_dir": root} (root needs no escaping). */
static char options[4096];

static void build_config(void) {
    snprintf(config_json, sizeof config_json,
             "{\"schema_version\":\"fabric.agent/v1alpha1\","
             "\"metadata\":{\"name\":\"c-abi\"},"
             "\"harness\":{\"adapter_id\":\"fabric.scripted\","
             "\"settings\":{\"replies\":[\"echo: {input}\",\"turn {turn}: {previous_input}\"]}},"
             "\"discovery\":{\"local_paths\":[\"adapters/scripted\"]},"
             "\"runtime\":{\"max_turns\":4}}");
    snprintf(options, sizeof options, "{\"base_dir\":\"%s\"}", root);
}

static void test_version(void) {
    CHECK(fabric_abi_version() == FABRIC_ABI_VERSION, "ABI version matches the header");
    CHECK(strcmp(fabric_version(), FABRIC_VERSION) == 0, "library version matches the header");
    fabric_string_free(NULL); /* no-op */
    CHECK(FABRIC_STATUS_OK == 0, "OK is 0");
    CHECK(FABRIC_STATUS_END >= 100 && FABRIC_STATUS_TIMEOUT >= 100, "stream statuses >= 100");
}

static void test_validate(void) {
    EXPECT(FABRIC_STATUS_OK, "\"fabric.scripted\"", "validate accepts a config",
           fabric_validate(config_json, options, &out));

    EXPECT(FABRIC_STATUS_OK, "\"schema_version\"", "validate with NULL options",
           fabric_validate(config_json, NULL, &out));

    EXPECT(FABRIC_STATUS_CONFIG, "bogus", "unknown field is a config error naming it",
           fabric_validate("{\"metadata\":{\"name\":\"x\"},\"harness\":{\"adapter_id\":\"a\"},"
                           "\"bogus\":1}",
                           NULL, &out));

    EXPECT(FABRIC_STATUS_CONFIG, "models.default.top_p", "rule violation names the path",
           fabric_validate("{\"metadata\":{\"name\":\"x\"},\"harness\":{\"adapter_id\":\"a\"},"
                           "\"models\":{\"default\":{\"provider\":\"p\",\"model\":\"m\",\"top_p\":2}}}",
                           NULL, &out));

    EXPECT(FABRIC_STATUS_CONFIG, "\"stage\":\"config\"", "invalid JSON is a config error",
           fabric_validate("not json", NULL, &out));
}

static void test_null_and_utf8(void) {
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "NULL config_json",
           fabric_validate(NULL, NULL, &out));
    CHECK(fabric_validate(config_json, NULL, NULL) == FABRIC_STATUS_INVALID_ARGUMENT, "NULL out");

    const char bad[] = {'{', '"', (char)0xff, (char)0xfe, '"', '}', 0};
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "invalid_utf8", "invalid UTF-8 config_json",
           fabric_validate(bad, NULL, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "options_json", "invalid UTF-8 options_json names the argument",
           fabric_validate(config_json, bad, &out));
}

static void test_plan_doctor_inspect(void) {
    EXPECT(FABRIC_STATUS_OK, "\"adapter_id\":\"fabric.scripted\"", "plan selects the scripted adapter",
           fabric_plan(config_json, options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"descriptor_sha256\"", "plan carries the descriptor fingerprint",
           fabric_plan(config_json, options, &out));
    EXPECT(FABRIC_STATUS_CONFIG, "adapter", "plan of an unknown adapter is a config error",
           fabric_plan("{\"metadata\":{\"name\":\"x\"},\"harness\":{\"adapter_id\":\"no.such.adapter\"}}",
                       options, &out));
    EXPECT(FABRIC_STATUS_CAPABILITY, "\"stage\":\"plan\"", "a field the adapter does not accept",
           fabric_plan("{\"metadata\":{\"name\":\"x\"},\"harness\":{\"adapter_id\":\"fabric.scripted\"},"
                       "\"discovery\":{\"local_paths\":[\"adapters/scripted\"]},"
                       "\"mcp\":{\"servers\":{\"gh\":{\"transport\":\"stdio\",\"url\":\"mcp\"}}}}",
                       options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"checks\"", "doctor reports checks",
           fabric_doctor(config_json, options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"skills\":false", "inspect without a descriptor: false claims",
           fabric_inspect(config_json, NULL, NULL, &out));
    EXPECT(FABRIC_STATUS_CONFIG, "descriptor_json", "inspect with a non-JSON descriptor",
           fabric_inspect(config_json, "{nope", NULL, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "plan with NULL config",
           fabric_plan(NULL, options, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "doctor with NULL config",
           fabric_doctor(NULL, options, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "inspect with NULL config",
           fabric_inspect(NULL, NULL, NULL, &out));
}

/* The options object: expected_descriptor_sha256 enforced by the core, strict keys. */
static void test_options(void) {
    char *plan = NULL;
    int32_t status = fabric_plan(config_json, options, &plan);
    const char *key = "\"descriptor_sha256\":\"";
    const char *at = plan != NULL ? strstr(plan, key) : NULL;
    CHECK(status == FABRIC_STATUS_OK && at != NULL, "options: plan has a fingerprint");
    char sha[65] = {0};
    if (at != NULL) {
        memcpy(sha, at + strlen(key), 64);
    }
    fabric_string_free(plan);

    char pinned[4200];
    snprintf(pinned, sizeof pinned, "{\"base_dir\":\"%s\",\"expected_descriptor_sha256\":\"%s\"}", root, sha);
    EXPECT(FABRIC_STATUS_OK, sha, "plan with the matching fingerprint", fabric_plan(config_json, pinned, &out));
    snprintf(pinned, sizeof pinned, "{\"base_dir\":\"%s\",\"expected_descriptor_sha256\":\"%064d\"}", root, 0);
    EXPECT(FABRIC_STATUS_CONFIG, "\"code\":\"descriptor_mismatch\"", "plan with another fingerprint",
           fabric_plan(config_json, pinned, &out));
    EXPECT(FABRIC_STATUS_CONFIG, "\"stage\":\"plan\"", "descriptor_mismatch is reported at plan",
           fabric_run(config_json, NULL, pinned, &out));
    fabric_runtime rt = 0;
    EXPECT(FABRIC_STATUS_CONFIG, "descriptor_mismatch", "runtime start with another fingerprint",
           fabric_runtime_start(config_json, pinned, &rt, &out));
    CHECK(rt == 0, "no runtime handle after a mismatch");
    EXPECT(FABRIC_STATUS_OK, "\"descriptor_fingerprint\"", "doctor reports the fingerprint check",
           fabric_doctor(config_json, pinned, &out));

    EXPECT(FABRIC_STATUS_CONFIG, "\"path\":\"options.bogus\"", "unknown option key names the field",
           fabric_plan(config_json, "{\"bogus\":1}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "unknown_field", "unknown option key in validate",
           fabric_validate(config_json, "{\"base_dir\":\".\",\"bogus\":1}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "\"path\":\"options.base_dir\"", "mistyped option names the field",
           fabric_run(config_json, NULL, "{\"base_dir\":5}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "\"code\":\"invalid_json\"", "options that are not JSON",
           fabric_plan(config_json, "{nope", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "options_json", "invalid_json names the argument",
           fabric_runtime_start(config_json, "{nope", &rt, &out));
    EXPECT(FABRIC_STATUS_OK, "\"adapter_id\":\"fabric.scripted\"", "empty options are the defaults",
           fabric_plan(config_json, "{}", &out));
}

static void test_run(void) {
    EXPECT(FABRIC_STATUS_OK, "echo: hello from C", "run returns the scripted reply",
           fabric_run(config_json, "{\"input\":\"hello from C\",\"request_id\":\"request-c-1\"}", options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"request_id\":\"request-c-1\"", "run keeps the caller's request id",
           fabric_run(config_json, "{\"input\":\"x\",\"request_id\":\"request-c-1\"}", options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"status\":\"succeeded\"", "run with a NULL request (empty input)",
           fabric_run(config_json, NULL, options, &out));
    EXPECT(FABRIC_STATUS_CONFIG, "\"path\":\"request.context\"", "run with a request of the wrong shape",
           fabric_run(config_json, "{\"input\":\"x\",\"context\":5}", options, &out));
    EXPECT(FABRIC_STATUS_CONFIG, "`request_json` is not valid JSON", "run with a non-JSON request",
           fabric_run(config_json, "{not json", options, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "run with NULL config",
           fabric_run(NULL, NULL, options, &out));
}

static void test_runtime(void) {
    fabric_runtime rt = 0;
    EXPECT(FABRIC_STATUS_OK, "\"runtime_id\":\"runtime-", "runtime start",
           fabric_runtime_start(config_json, options, &rt, &out));
    CHECK(rt != 0, "runtime handle is nonzero");
    CHECK(rt <= 9007199254740991ULL, "runtime handle fits in 2^53-1");

    EXPECT(FABRIC_STATUS_OK, "echo: first", "first invoke",
           fabric_runtime_invoke(rt, "{\"input\":\"first\"}", &out));
    EXPECT(FABRIC_STATUS_OK, "turn 2: first", "second invoke sees runtime state",
           fabric_runtime_invoke(rt, "{\"input\":\"second\"}", &out));
    /* overrides reach the adapter as request.extensions, checked against its run_request schema */
    EXPECT(FABRIC_STATUS_OK, "\"temperature\":0.5", "overrides reach the adapter",
           fabric_runtime_invoke(rt, "{\"input\":\"o\",\"overrides\":{\"temperature\":0.5}}", &out));
    EXPECT(FABRIC_STATUS_RUNTIME, "request.extensions.temperature", "overrides violating the schema",
           fabric_runtime_invoke(rt, "{\"input\":\"o\",\"overrides\":{\"temperature\":9}}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "request.overrides", "overrides must be an object",
           fabric_runtime_invoke(rt, "{\"input\":\"o\",\"overrides\":[1]}", &out));
    EXPECT(FABRIC_STATUS_OK, "\"state\":\"idle\"", "status of an idle runtime",
           fabric_runtime_status(rt, &out));
    EXPECT(FABRIC_STATUS_OK, "\"invocations\":4", "status counts invocations",
           fabric_runtime_status(rt, &out));
    EXPECT(FABRIC_STATUS_OK, "runtime_stop", "stop returns stop events",
           fabric_runtime_stop(rt, &out));
    EXPECT(FABRIC_STATUS_OK, "\"state\":\"stopped\"", "status after stop",
           fabric_runtime_status(rt, &out));
    EXPECT(FABRIC_STATUS_STATE, "runtime_stopped", "invoke after stop is a state error",
           fabric_runtime_invoke(rt, "{\"input\":\"late\"}", &out));
    EXPECT(FABRIC_STATUS_OK, NULL, "second stop is idempotent", fabric_runtime_stop(rt, &out));

    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_OK, "free");
    /* use after free, double free */
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "invoke after free",
           fabric_runtime_invoke(rt, "{\"input\":\"x\"}", &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "status after free",
           fabric_runtime_status(rt, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "stop after free",
           fabric_runtime_stop(rt, &out));
    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_INVALID_ARGUMENT, "double free returns a status");
    CHECK(fabric_runtime_free(0) == FABRIC_STATUS_OK, "free(0) is a no-op");
    CHECK(fabric_environment_free(0) == FABRIC_STATUS_OK, "environment free(0) is a no-op");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_handle", "invoke on handle 0",
           fabric_runtime_invoke(0, NULL, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "unknown_handle", "invoke on a never-issued handle",
           fabric_runtime_invoke(9007199254740991ULL, NULL, &out));

    /* NULL out-parameters */
    fabric_runtime none = 0;
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "runtime_out", "start with NULL runtime_out",
           fabric_runtime_start(config_json, options, NULL, &out));
    CHECK(fabric_runtime_start(config_json, options, &none, NULL) == FABRIC_STATUS_INVALID_ARGUMENT,
          "start with NULL out");
    CHECK(none == 0, "no handle is written on error");

    /* A runtime freed without stop is terminated; its id stays invalid. */
    fabric_runtime rt2 = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "second runtime start",
           fabric_runtime_start(config_json, options, &rt2, &out));
    CHECK(rt2 > rt, "ids are never reused");
    CHECK(fabric_runtime_free(rt2) == FABRIC_STATUS_OK, "free a running runtime");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "invoke after freeing a running runtime",
           fabric_runtime_invoke(rt2, NULL, &out));
}

/* Prewarmed hosts: a matching run takes the waiting host; close ends what is left. */
static void test_prewarm(void) {
    fabric_prewarm pw = 0;
    EXPECT(FABRIC_STATUS_OK, "\"hosts\":1", "prewarm one host",
           fabric_prewarm_start(config_json, options, 1, &pw, &out));
    CHECK(pw != 0, "prewarm handle is nonzero");
    EXPECT(FABRIC_STATUS_OK, "\"claimed\":0", "prewarm status before a run", fabric_prewarm_status(pw, &out));
    EXPECT(FABRIC_STATUS_OK, "echo: warm", "run on a prewarmed host",
           fabric_run(config_json, "{\"input\":\"warm\"}", options, &out));
    EXPECT(FABRIC_STATUS_OK, "\"claimed\":1", "the run took the prewarmed host", fabric_prewarm_status(pw, &out));
    EXPECT(FABRIC_STATUS_OK, "\"closed\":true", "prewarm close", fabric_prewarm_close(pw, &out));
    EXPECT(FABRIC_STATUS_OK, "\"ready_pids\":[]", "close is idempotent", fabric_prewarm_close(pw, &out));
    CHECK(fabric_prewarm_free(pw) == FABRIC_STATUS_OK, "prewarm free");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "prewarm status after free", fabric_prewarm_status(pw, &out));
    CHECK(fabric_prewarm_free(pw) == FABRIC_STATUS_INVALID_ARGUMENT, "prewarm double free returns a status");
    CHECK(fabric_prewarm_free(0) == FABRIC_STATUS_OK, "prewarm free(0) is a no-op");
    fabric_prewarm none = 0;
    EXPECT(FABRIC_STATUS_CONFIG, "\"path\":\"hosts\"", "prewarm of zero hosts",
           fabric_prewarm_start(config_json, options, 0, &none, &out));
    CHECK(none == 0, "no prewarm handle is written on error");
}

static void test_environment(void) {
    fabric_environment env = 0;
    EXPECT(FABRIC_STATUS_OK, "\"environment_id\"", "environment prepare",
           fabric_environment_prepare(config_json, options, &env, &out));
    CHECK(env != 0, "environment handle is nonzero");

    fabric_runtime a = 0, b = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "first runtime in the environment",
           fabric_environment_start_runtime(env, config_json, options, &a, &out));
    EXPECT(FABRIC_STATUS_OK, NULL, "second runtime in the environment",
           fabric_environment_start_runtime(env, config_json, options, &b, &out));
    EXPECT(FABRIC_STATUS_OK, "echo: in env", "invoke a runtime in the environment",
           fabric_runtime_invoke(a, "{\"input\":\"in env\"}", &out));

    /* wrong handle kinds */
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "wrong_handle_kind", "environment used as a runtime",
           fabric_runtime_invoke(env, NULL, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "wrong_handle_kind", "runtime used as an environment",
           fabric_environment_release(a, &out));
    CHECK(fabric_runtime_free(env) == FABRIC_STATUS_INVALID_ARGUMENT, "runtime_free of an environment");
    CHECK(fabric_environment_free(a) == FABRIC_STATUS_INVALID_ARGUMENT, "environment_free of a runtime");

    EXPECT(FABRIC_STATUS_OK, NULL, "stop a", fabric_runtime_stop(a, &out));
    EXPECT(FABRIC_STATUS_OK, NULL, "stop b", fabric_runtime_stop(b, &out));
    CHECK(fabric_runtime_free(a) == FABRIC_STATUS_OK, "free a");
    CHECK(fabric_runtime_free(b) == FABRIC_STATUS_OK, "free b");
    EXPECT(FABRIC_STATUS_OK, "\"released\":true", "release the environment",
           fabric_environment_release(env, &out));
    fabric_runtime late = 0;
    EXPECT(FABRIC_STATUS_STATE, "environment_released", "start in a released environment",
           fabric_environment_start_runtime(env, config_json, options, &late, &out));
    CHECK(fabric_environment_free(env) == FABRIC_STATUS_OK, "free the environment");
    CHECK(fabric_environment_free(env) == FABRIC_STATUS_INVALID_ARGUMENT, "environment double free");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "release after free",
           fabric_environment_release(env, &out));
}

/* Concurrent invokes on one runtime: exactly the overlapping ones get STATE. */
struct invoke_arg {
    fabric_runtime rt;
    int ok;
    int busy;
};

static void *invoke_worker(void *p) {
    struct invoke_arg *arg = p;
    for (int i = 0; i < 10; i++) {
        char *out = NULL;
        int32_t status = fabric_runtime_invoke(arg->rt, "{\"input\":\"t\"}", &out);
        if (status == FABRIC_STATUS_OK) {
            arg->ok++;
        } else if (status == FABRIC_STATUS_STATE && out != NULL && strstr(out, "runtime_busy") != NULL) {
            arg->busy++;
        }
        fabric_string_free(out);
    }
    return NULL;
}

static void test_concurrent_invokes(void) {
    fabric_runtime rt = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "runtime for concurrency", fabric_runtime_start(config_json, options, &rt, &out));
    struct invoke_arg args[3] = {{rt, 0, 0}, {rt, 0, 0}, {rt, 0, 0}};
    pthread_t threads[3];
    for (int i = 0; i < 3; i++) {
        pthread_create(&threads[i], NULL, invoke_worker, &args[i]);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(threads[i], NULL);
    }
    int ok = 0, busy = 0;
    for (int i = 0; i < 3; i++) {
        ok += args[i].ok;
        busy += args[i].busy;
    }
    CHECK(ok + busy == 30, "every concurrent invoke either succeeds or is runtime_busy");
    CHECK(ok >= 1, "at least one concurrent invoke succeeds");
    char *status = NULL;
    CHECK(fabric_runtime_status(rt, &status) == FABRIC_STATUS_OK, "status after concurrency");
    char expected[64];
    snprintf(expected, sizeof expected, "\"invocations\":%d", ok);
    CHECK(status != NULL && strstr(status, expected) != NULL, "invocation count equals the successes");
    fabric_string_free(status);
    EXPECT(FABRIC_STATUS_OK, NULL, "stop after concurrency", fabric_runtime_stop(rt, &out));
    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_OK, "free after concurrency");
}

#define THREADS 4
#define ROUNDS 25

static void *validate_worker(void *arg) {
    int *ok = arg;
    for (int i = 0; i < ROUNDS; i++) {
        char *out = NULL;
        int32_t status = fabric_validate(config_json, options, &out);
        if (status == FABRIC_STATUS_OK && out != NULL && strstr(out, "c-abi") != NULL) {
            (*ok)++;
        }
        fabric_string_free(out);
    }
    return NULL;
}

static void test_threads(void) {
    pthread_t threads[THREADS];
    int ok[THREADS] = {0};
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&threads[i], NULL, validate_worker, &ok[i]) == 0, "pthread_create");
    }
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        total += ok[i];
    }
    CHECK(total == THREADS * ROUNDS, "concurrent validate calls all succeed");
}

/* Resource snapshots and health checks (fabric_runtime_resource_snapshot, fabric_check). */
static void test_observe(void) {
    fabric_runtime rt = 0;
    char *started = NULL;
    int32_t status = fabric_runtime_start(config_json, options, &rt, &started);
    CHECK(status == FABRIC_STATUS_OK && started != NULL, "observe: runtime start");
    if (status != FABRIC_STATUS_OK || started == NULL) {
        fabric_string_free(started);
        return;
    }
    char runtime_id[128] = {0};
    const char *key = "\"runtime_id\":\"";
    const char *at = strstr(started, key);
    if (at != NULL) {
        at += strlen(key);
        size_t n = 0;
        while (at[n] != '\0' && at[n] != '"' && n + 1 < sizeof runtime_id) {
            runtime_id[n] = at[n];
            n++;
        }
    }
    fabric_string_free(started);
    CHECK(strncmp(runtime_id, "runtime-", 8) == 0, "observe: runtime id parsed");

    EXPECT(FABRIC_STATUS_OK, "\"process_count\":", "snapshot of a live runtime",
           fabric_runtime_resource_snapshot(rt, &out));
    EXPECT(FABRIC_STATUS_OK, "\"resource_snapshot\":{", "invoke result carries resource_snapshot",
           fabric_runtime_invoke(rt, "{\"input\":\"stats\"}", &out));
    EXPECT(FABRIC_STATUS_OK, "\"system_stats\":{", "invoke result carries system_stats",
           fabric_runtime_invoke(rt, "{\"input\":\"stats\"}", &out));

    char request[256];
    snprintf(request, sizeof request,
             "{\"scope\":\"runtime\",\"runtime_id\":\"%s\",\"level\":\"ready\"}", runtime_id);
    EXPECT(FABRIC_STATUS_OK, "\"outcome\":\"passed\"", "check ready passes on the scripted adapter",
           fabric_check(0, request, &out));
    EXPECT(FABRIC_STATUS_OK, "\"runtime_unavailable\"", "check of an unknown runtime is a report",
           fabric_check(0, "{\"scope\":\"runtime\",\"runtime_id\":\"runtime-nope\"}", &out));
    EXPECT(FABRIC_STATUS_OK, "\"unsupported_scope\"", "server scope is unsupported locally",
           fabric_check(0, "{\"scope\":\"server\"}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "invalid_check_request", "check request breaking a rule",
           fabric_check(0, "{\"scope\":\"runtime\"}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "invalid_check_request", "check request with an unknown field",
           fabric_check(0, "{\"scope\":\"server\",\"bogus\":1}", &out));
    EXPECT(FABRIC_STATUS_CONFIG, "invalid_json", "check request that is not JSON",
           fabric_check(0, "{", &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_argument", "check with a NULL request",
           fabric_check(0, NULL, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "unknown_handle", "check in a never-issued environment",
           fabric_check(9007199254740991ULL, request, &out));
    CHECK(fabric_check(0, request, NULL) == FABRIC_STATUS_INVALID_ARGUMENT, "check with NULL out");

    EXPECT(FABRIC_STATUS_OK, NULL, "observe: stop", fabric_runtime_stop(rt, &out));
    EXPECT(FABRIC_STATUS_RESOURCE_UNAVAILABLE, "runtime_stopped", "snapshot after stop",
           fabric_runtime_resource_snapshot(rt, &out));
    EXPECT(FABRIC_STATUS_OK, "\"runtime_unavailable\"", "check after stop",
           fabric_check(0, request, &out));
    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_OK, "observe: free");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "snapshot after free",
           fabric_runtime_resource_snapshot(rt, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_handle", "snapshot on handle 0",
           fabric_runtime_resource_snapshot(0, &out));
}

/* A native OpenAI stream pulled through fabric_stream_*: chunks, END, the separate result,
 * TIMEOUT, one active turn, close, and misuse (next after free, double free, NULL). */
static void test_stream(void) {
    fabric_runtime rt = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "stream: runtime start",
           fabric_runtime_start(config_json, options, &rt, &out));
    fabric_stream st = 0;
    EXPECT(FABRIC_STATUS_OK, "\"kind\":\"openai.chat_completions.chunk/v1\"", "stream: start",
           fabric_runtime_invoke_openai_stream(
               rt, "{\"input\":\"streaming\",\"context\":{\"scripted\":{\"sleep_ms\":300},"
                   "\"scripted_stream\":{\"chunk_chars\":3}}}",
               &st, &out));
    CHECK(st != 0 && st <= 9007199254740991ULL, "stream handle is a nonzero id");
    EXPECT(FABRIC_STATUS_STATE, "runtime_busy", "stream: a second turn is a state error",
           fabric_runtime_invoke(rt, "{\"input\":\"x\"}", &out));
    char *out = NULL;
    CHECK(fabric_stream_next(st, 50, &out) == FABRIC_STATUS_TIMEOUT && out == NULL,
          "stream: TIMEOUT while the adapter sleeps, out stays NULL");
    int chunks = 0;
    int32_t status;
    for (;;) {
        out = NULL;
        status = fabric_stream_next(st, 10000, &out);
        if (status != FABRIC_STATUS_OK) {
            break;
        }
        CHECK(strstr(out, "\"chat.completion.chunk\"") != NULL, "stream: item is a chunk");
        chunks++;
        fabric_string_free(out);
    }
    CHECK(status == FABRIC_STATUS_END && out == NULL, "stream: END after the last chunk");
    CHECK(chunks == 5, "stream: \"echo: streaming\" in chunks of 3 characters");
    EXPECT(FABRIC_STATUS_OK, "echo: streaming", "stream: separate result",
           fabric_stream_result(st, &out));
    CHECK(fabric_stream_next(st, 0, &out) == FABRIC_STATUS_END, "stream: END again");
    CHECK(fabric_stream_close(st) == FABRIC_STATUS_OK, "stream: close");
    CHECK(fabric_stream_close(st) == FABRIC_STATUS_OK, "stream: close is idempotent");
    CHECK(fabric_stream_next(st, 0, &out) == FABRIC_STATUS_END, "stream: next after close is END");
    EXPECT(FABRIC_STATUS_OK, "\"state\":\"idle\"", "stream: runtime idle again",
           fabric_runtime_status(rt, &out));

    /* Early close: unread chunks are dropped, the turn is not cancelled. */
    fabric_stream early = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "stream: second stream",
           fabric_runtime_invoke_openai_stream(rt, "{\"input\":\"abcdefghij\"}", &early, &out));
    CHECK(fabric_stream_close(early) == FABRIC_STATUS_OK, "stream: early close");
    EXPECT(FABRIC_STATUS_OK, "\"response\":\"turn 2: streaming\"", "stream: result after early close",
           fabric_stream_result(early, &out));
    CHECK(fabric_stream_free(early) == FABRIC_STATUS_OK, "stream: free");

    /* Batches: poll with 0 on this thread, wait with a timeout only when nothing is ready. */
    fabric_stream batch = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "stream: batch stream",
           fabric_runtime_invoke_openai_stream(
               rt, "{\"input\":\"batched\",\"context\":{\"scripted_stream\":{\"chunk_chars\":1}}}",
               &batch, &out));
    int items = 0;
    for (;;) {
        out = NULL;
        status = fabric_stream_next_batch(batch, 0, 0, &out);
        if (status == FABRIC_STATUS_TIMEOUT) {
            CHECK(out == NULL, "batch: TIMEOUT leaves out NULL");
            status = fabric_stream_next_batch(batch, 10000, 4, &out);
        }
        if (status != FABRIC_STATUS_OK) {
            break;
        }
        size_t len = strlen(out);
        CHECK(len >= 2 && out[0] == '[' && out[len - 1] == ']', "batch: a JSON array");
        for (const char *at = out; (at = strstr(at, "\"chat.completion.chunk\"")) != NULL; at++) {
            items++;
        }
        fabric_string_free(out);
    }
    CHECK(status == FABRIC_STATUS_END && out == NULL, "batch: END after the last batch");
    CHECK(items > 1, "batch: every chunk arrived");
    CHECK(fabric_stream_next_batch(batch, 0, 0, &out) == FABRIC_STATUS_END, "batch: END again");
    EXPECT(FABRIC_STATUS_OK, "\"status\":\"succeeded\"", "batch: result",
           fabric_stream_result(batch, &out));
    CHECK(fabric_stream_free(batch) == FABRIC_STATUS_OK, "batch: free");
    CHECK(fabric_stream_next_batch(batch, 0, 0, NULL) == FABRIC_STATUS_INVALID_ARGUMENT,
          "batch: NULL out");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "batch: after free",
           fabric_stream_next_batch(batch, 0, 0, &out));

    /* The readiness descriptor: drain, poll with 0, wait for the descriptor on TIMEOUT;
     * a wake-up that still times out finishes with a waiting pull. */
    fabric_stream ready = 0;
    EXPECT(FABRIC_STATUS_OK, NULL, "ready: stream",
           fabric_runtime_invoke_openai_stream(
               rt, "{\"input\":\"ready\",\"context\":{\"scripted_stream\":{\"chunk_chars\":2,\"delay_ms\":2}}}",
               &ready, &out));
    int32_t fd = -1;
    out = NULL;
    CHECK(fabric_stream_ready_fd(ready, &fd, &out) == FABRIC_STATUS_OK && fd >= 0 && out == NULL,
          "ready: a descriptor");
    int32_t again = -1;
    CHECK(fabric_stream_ready_fd(ready, &again, &out) == FABRIC_STATUS_OK && again == fd,
          "ready: the same descriptor again");
    int ready_items = 0, waits = 0, finishing = 0;
    char sink[64];
    for (;;) {
        while (read(fd, sink, sizeof sink) > 0) {
        }
        out = NULL;
        status = fabric_stream_next_batch(ready, 0, 0, &out);
        if (status == FABRIC_STATUS_TIMEOUT) {
            struct pollfd watch = {.fd = fd, .events = POLLIN, .revents = 0};
            CHECK(poll(&watch, 1, 10000) == 1, "ready: the descriptor wakes the consumer");
            waits++;
            while (read(fd, sink, sizeof sink) > 0) {
            }
            status = fabric_stream_next_batch(ready, 0, 0, &out);
            if (status == FABRIC_STATUS_TIMEOUT) {
                finishing++;
                status = fabric_stream_next_batch(ready, 10000, 0, &out);
            }
        }
        if (status != FABRIC_STATUS_OK) {
            break;
        }
        for (const char *at = out; (at = strstr(at, "\"chat.completion.chunk\"")) != NULL; at++) {
            ready_items++;
        }
        fabric_string_free(out);
    }
    CHECK(status == FABRIC_STATUS_END, "ready: END");
    CHECK(ready_items == 8, "ready: \"turn 4: batched\" in chunks of 2 characters");
    CHECK(waits > 0, "ready: waited on the descriptor");
    CHECK(finishing <= 1, "ready: at most one waiting pull (to finish)");
    EXPECT(FABRIC_STATUS_OK, "\"response\":\"turn 4: batched\"", "ready: result",
           fabric_stream_result(ready, &out));
    CHECK(fabric_stream_ready_fd(ready, NULL, &out) == FABRIC_STATUS_INVALID_ARGUMENT,
          "ready: NULL fd_out");
    fabric_string_free(out);
    CHECK(fabric_stream_free(ready) == FABRIC_STATUS_OK, "ready: free");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "ready: after free",
           fabric_stream_ready_fd(ready, &fd, &out));

    /* misuse */
    CHECK(fabric_stream_free(st) == FABRIC_STATUS_OK, "stream: free the first");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "stream: next after free",
           fabric_stream_next(st, 0, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stale_handle", "stream: result after free",
           fabric_stream_result(st, &out));
    CHECK(fabric_stream_free(st) == FABRIC_STATUS_INVALID_ARGUMENT, "stream: double free is a status");
    CHECK(fabric_stream_close(st) == FABRIC_STATUS_INVALID_ARGUMENT, "stream: close after free");
    CHECK(fabric_stream_free(0) == FABRIC_STATUS_OK, "stream: free(0) is a no-op");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "null_handle", "stream: next on handle 0",
           fabric_stream_next(0, 0, &out));
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "wrong_handle_kind", "stream: a runtime is not a stream",
           fabric_stream_next(rt, 0, &out));
    CHECK(fabric_stream_next(st, 0, NULL) == FABRIC_STATUS_INVALID_ARGUMENT, "stream: NULL out");
    fabric_stream none = 0;
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "stream_out", "stream: NULL stream_out",
           fabric_runtime_invoke_openai_stream(rt, NULL, NULL, &out));
    CHECK(none == 0, "stream: no handle written on error");
    EXPECT(FABRIC_STATUS_OK, NULL, "stream: stop", fabric_runtime_stop(rt, &out));
    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_OK, "stream: free runtime");
}

/* Non-blocking calls: begin, watch the descriptors with poll(2), take, free. */
static void wait_readable(int fd, const char *what) {
    struct pollfd watch = {.fd = fd, .events = POLLIN, .revents = 0};
    CHECK(poll(&watch, 1, 30000) == 1 && (watch.revents & POLLIN), what);
}

static void test_operations(void) {
    fabric_runtime rt = 0;
    EXPECT(FABRIC_STATUS_OK, "\"runtime_id\"", "operations: runtime start",
           fabric_runtime_start(config_json, options, &rt, &out));

    /* One operation, watched through its own descriptor. */
    fabric_operation op = 0;
    char *out = NULL;
    CHECK(fabric_runtime_invoke_begin(rt, "{\"input\":\"async from C\"}", 0, &op, &out) == FABRIC_STATUS_OK &&
              out == NULL && op != 0,
          "operations: invoke begins");
    int32_t fd = -1;
    CHECK(fabric_operation_ready_fd(op, &fd, &out) == FABRIC_STATUS_OK && fd >= 0 && out == NULL,
          "operations: ready fd");
    wait_readable(fd, "operations: the descriptor wakes the caller");
    EXPECT(FABRIC_STATUS_OK, "echo: async from C", "operations: take hands over the RunResult",
           fabric_operation_take(op, &out));
    CHECK(fabric_operation_take(op, &out) == FABRIC_STATUS_END && out == NULL, "operations: one take");
    CHECK(fabric_operation_free(op) == FABRIC_STATUS_OK, "operations: free");
    CHECK(fabric_operation_free(op) == FABRIC_STATUS_INVALID_ARGUMENT, "operations: double free is refused");

    /* Begin errors come back at once and create nothing. */
    fabric_operation none = 0;
    EXPECT(FABRIC_STATUS_CONFIG, "`request_json` is not valid JSON", "operations: bad request at begin",
           fabric_runtime_invoke_begin(rt, "{not json", 0, &none, &out));
    CHECK(none == 0, "operations: no handle written on error");
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "operation_out", "operations: NULL operation_out",
           fabric_runtime_invoke_begin(rt, NULL, 0, NULL, &out));

    /* A completion queue: one descriptor for a run and an invocation. */
    fabric_completion_queue queue = 0;
    CHECK(fabric_completion_queue_new(&queue, &out) == FABRIC_STATUS_OK && queue != 0 && out == NULL,
          "operations: queue");
    int32_t queue_fd = -1;
    CHECK(fabric_completion_queue_fd(queue, &queue_fd, &out) == FABRIC_STATUS_OK && queue_fd >= 0,
          "operations: queue fd");
    fabric_operation invoke = 0, run = 0;
    CHECK(fabric_runtime_invoke_begin(rt, "{\"input\":\"queued\"}", queue, &invoke, &out) == FABRIC_STATUS_OK,
          "operations: queued invoke begins");
    CHECK(fabric_run_begin(config_json, "{\"input\":\"queued run\"}", options, queue, &run, &out) ==
              FABRIC_STATUS_OK,
          "operations: queued run begins");
    int remaining = 2;
    while (remaining > 0) {
        wait_readable(queue_fd, "operations: the queue wakes the caller");
        fabric_operation next = 0;
        while (fabric_completion_queue_next(queue, &next, &out) == FABRIC_STATUS_OK) {
            CHECK(next == invoke || next == run, "operations: the queue names our operations");
            EXPECT(FABRIC_STATUS_OK, next == invoke ? "turn 2: async from C" : "echo: queued run", "operations: queued take",
                   fabric_operation_take(next, &out));
            CHECK(fabric_operation_free(next) == FABRIC_STATUS_OK, "operations: queued free");
            remaining--;
        }
    }
    CHECK(fabric_completion_queue_free(queue) == FABRIC_STATUS_OK, "operations: queue free");

    /* Free before completion: nothing leaks or crashes (ASan checks), the runtime recovers. */
    CHECK(fabric_runtime_invoke_begin(rt, NULL, 0, &op, &out) == FABRIC_STATUS_OK, "operations: begin then free");
    CHECK(fabric_operation_free(op) == FABRIC_STATUS_OK, "operations: free before completion");
    EXPECT(FABRIC_STATUS_OK, NULL, "operations: stop", fabric_runtime_stop(rt, &out));
    CHECK(fabric_runtime_free(rt) == FABRIC_STATUS_OK, "operations: free runtime");
}

int main(int argc, char **argv) {
    if (argc > 1) {
        root = argv[1];
    }
    build_config();
    test_version();
    test_validate();
    test_null_and_utf8();
    test_threads();
    test_plan_doctor_inspect();
    test_options();
    test_run();
    test_runtime();
    test_prewarm();
    test_environment();
    test_concurrent_invokes();
    test_observe();
    test_stream();
    test_operations();
    printf("abi_test: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
