/*
 * Warm invocations of the scripted adapter through the C ABI itself (no language binding):
 * the layer between our Rust call (rust_bench.rs) and the Go, Node and Python bindings.
 * Same config as the other benches of this directory. Prints one JSON line per measure:
 *
 *   warm_invoke_us             fabric_runtime_invoke (blocking)
 *   warm_invoke_begin_poll_us  fabric_runtime_invoke_begin + poll(2) on the operation's
 *                              readiness descriptor + fabric_operation_take (what an event
 *                              loop does, without the event loop)
 *   warm_invoke_queue_us       the same through a completion queue (what the Node and Go
 *                              bindings do): begin on the queue, poll the queue's
 *                              descriptor, next, take
 *
 * with the CPU time (user+sys, all threads of this process) per call, and the size of the
 * RunResult JSON the ABI hands over.
 *
 * Build and run (bench/runner.py does this):
 *   cc -O2 -Iinclude bench/bindings/c_bench.c -o /tmp/c_bench -Ltarget/release -lfabric_ffi \
 *      -Wl,-rpath,$PWD/target/release
 *   /tmp/c_bench <repository root> [n] [warmup]
 */
#define _POSIX_C_SOURCE 200809L

#include "fabric.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef int (*call_fn)(fabric_runtime runtime, size_t *size);

static fabric_completion_queue queue;
static int queue_fd = -1;
static const char *request = "{\"input\":\"ping\"}";

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

/* Tasks (processes and threads) allocated so far in this PID namespace, or -1: counted
 * only when this program is PID 1 of its own namespace (bench/runner.py runs it so;
 * bench/python/meter.py explains the count). */
static long last_pid(void) {
    if (getpid() != 1) return -1;
    FILE *file = fopen("/proc/sys/kernel/ns_last_pid", "r");
    if (file == NULL) return -1;
    long pid = -1;
    if (fscanf(file, "%ld", &pid) != 1) pid = -1;
    fclose(file);
    return pid;
}

static int fail(const char *what, int32_t status, char *out) {
    fprintf(stderr, "error: %s: status %d: %s\n", what, (int)status, out ? out : "(null)");
    fabric_string_free(out);
    return -1;
}

/* Checks a RunResult document: succeeded, and records its size. */
static int check_result(int32_t status, char *out, size_t *size) {
    if (status != FABRIC_STATUS_OK || out == NULL || strstr(out, "\"succeeded\"") == NULL) {
        return fail("invoke", status, out);
    }
    *size = strlen(out);
    fabric_string_free(out);
    return 0;
}

static int invoke_blocking(fabric_runtime runtime, size_t *size) {
    char *out = NULL;
    int32_t status = fabric_runtime_invoke(runtime, request, &out);
    return check_result(status, out, size);
}

static int wait_readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    return poll(&p, 1, -1) == 1 ? 0 : -1;
}

static int invoke_begin_poll(fabric_runtime runtime, size_t *size) {
    fabric_operation operation = 0;
    char *out = NULL;
    int32_t status = fabric_runtime_invoke_begin(runtime, request, 0, &operation, &out);
    if (status != FABRIC_STATUS_OK) return fail("invoke_begin", status, out);
    int32_t fd = -1;
    status = fabric_operation_ready_fd(operation, &fd, &out);
    if (status != FABRIC_STATUS_OK) return fail("ready_fd", status, out);
    if (wait_readable(fd) != 0) return fail("poll", -1, NULL);
    status = fabric_operation_take(operation, &out);
    fabric_operation_free(operation);
    return check_result(status, out, size);
}

static int invoke_queue(fabric_runtime runtime, size_t *size) {
    fabric_operation operation = 0;
    char *out = NULL;
    int32_t status = fabric_runtime_invoke_begin(runtime, request, queue, &operation, &out);
    if (status != FABRIC_STATUS_OK) return fail("invoke_begin", status, out);
    for (;;) {
        if (wait_readable(queue_fd) != 0) return fail("poll", -1, NULL);
        fabric_operation done = 0;
        status = fabric_completion_queue_next(queue, &done, &out);
        if (status == FABRIC_STATUS_OK && done == operation) break;
        if (status != FABRIC_STATUS_OK && status != FABRIC_STATUS_TIMEOUT) {
            return fail("queue_next", status, out);
        }
    }
    status = fabric_operation_take(operation, &out);
    fabric_operation_free(operation);
    return check_result(status, out, size);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int measure(const char *name, fabric_runtime runtime, call_fn call, int n, int warmup) {
    size_t size = 0;
    for (int i = 0; i < warmup; i++) {
        if (call(runtime, &size) != 0) return -1;
    }
    double *samples = calloc((size_t)n, sizeof(double));
    if (samples == NULL) return -1;
    long pid_before = last_pid();
    double cpu = cpu_us();
    for (int i = 0; i < n; i++) {
        double began = now_us();
        if (call(runtime, &size) != 0) {
            free(samples);
            return -1;
        }
        samples[i] = now_us() - began;
    }
    double cpu_per_call = (cpu_us() - cpu) / n;
    long pid_after = last_pid();
    long tasks = pid_before < 0 || pid_after < 0 ? -1 : pid_after - pid_before;
    double sum = 0;
    for (int i = 0; i < n; i++) sum += samples[i];
    qsort(samples, (size_t)n, sizeof(double), compare);
    printf("{\"binding\": \"c\", \"measure\": \"%s\", \"n\": %d, \"median_us\": %.1f, \"p90_us\": %.1f, "
           "\"mean_us\": %.1f, \"min_us\": %.1f, \"cpu_per_call_us\": %.1f, \"result_bytes\": %zu, \"tasks\": %ld}\n",
           name, n, samples[n / 2], samples[n * 9 / 10], sum / n, samples[0], cpu_per_call, size, tasks);
    fflush(stdout);
    free(samples);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: c_bench <repository root> [n] [warmup]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    int warmup = argc > 3 ? atoi(argv[3]) : 200;
    if (n < 1) n = 1;
    char config[4096];
    snprintf(config, sizeof config,
             "{\"metadata\": {\"name\": \"bench-c\"}, \"harness\": {\"adapter_id\": \"fabric.scripted\"}, "
             "\"discovery\": {\"local_paths\": [\"%s/adapters/scripted/scripted.fabric-adapter.json\"]}}",
             argv[1]);
    fabric_runtime runtime = 0;
    char *out = NULL;
    int32_t status = fabric_runtime_start(config, NULL, &runtime, &out);
    if (status != FABRIC_STATUS_OK) return fail("start", status, out) ? 1 : 1;
    fabric_string_free(out);
    status = fabric_completion_queue_new(&queue, &out);
    if (status != FABRIC_STATUS_OK) return fail("queue", status, out) ? 1 : 1;
    status = fabric_completion_queue_fd(queue, &queue_fd, &out);
    if (status != FABRIC_STATUS_OK) return fail("queue fd", status, out) ? 1 : 1;
    int rc = 0;
    if (measure("warm_invoke_us", runtime, invoke_blocking, n, warmup) != 0 ||
        measure("warm_invoke_begin_poll_us", runtime, invoke_begin_poll, n, warmup) != 0 ||
        measure("warm_invoke_queue_us", runtime, invoke_queue, n, warmup) != 0) {
        rc = 1;
    }
    out = NULL;
    fabric_runtime_stop(runtime, &out);
    fabric_string_free(out);
    fabric_runtime_free(runtime);
    fabric_completion_queue_free(queue);
    return rc;
}
