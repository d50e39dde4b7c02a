// cc quickstart.c $(pkg-config --cflags --libs fabric) -o quickstart && ./quickstart
#include <stdio.h>

#include <fabric.h>

int main(void) {
    const char *config = "{\"metadata\": {\"name\": \"hello\"},"
                         " \"harness\": {\"adapter_id\": \"fabric.scripted\","
                         " \"settings\": {\"replies\": [\"Hello! You said: {input}\"]}}}";
    char *out = NULL;
    int32_t status = fabric_run(config, "{\"input\": \"Hello, Fabric\"}", NULL, &out);
    // `out` is the RunResult JSON on success, the ErrorInfo JSON otherwise.
    printf("%s\n", out);
    fabric_string_free(out);
    return status == FABRIC_STATUS_OK ? 0 : 1;
}
