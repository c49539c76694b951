// The libcurl side of `swift run -c release sesame-bench`: the same workloads as Sesame's worker,
// on libcurl's multi interface. Built by the benchmark with the system's cc and libcurl.
//
// usage: libcurl-driver keepalive|newconn|concurrent COUNT URL CAFILE [CONCURRENCY]
// prints: wall_seconds cpu_seconds bytes_received
//
// usage: libcurl-driver spawn PROGRAM [ARGUMENTS...]
// runs PROGRAM and prints "peak-rss-kb N" for it on stderr. The benchmark starts every client this
// way: a child spawned straight from the (much larger) benchmark process would report the
// benchmark's memory as its own peak (Linux keeps the pre-exec high-water mark). With
// SESAME_BENCH_CPU=N in the environment, PROGRAM runs on processor N only.
#define _GNU_SOURCE
#include <curl/curl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// Each response's body is kept in memory, as Sesame's `data(for:)` hands it over: in a buffer
// sized from Content-Length when the server sends one (grown by doubling otherwise), freed when
// the transfer ends (`finish`).
struct body {
    CURL *easy;
    char *data;
    size_t length, capacity;
    long long *total;
};

static size_t sink(char *data, size_t size, size_t count, void *user) {
    struct body *body = user;
    size_t length = size * count;
    if (body->length + length > body->capacity) {
        curl_off_t announced = -1;
        curl_easy_getinfo(body->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
        size_t capacity = body->capacity ? body->capacity * 2 : 16384;
        if (announced > 0 && (size_t)announced > capacity) capacity = (size_t)announced;
        if (capacity < body->length + length) capacity = body->length + length;
        char *grown = realloc(body->data, capacity);
        if (!grown) return 0;
        body->data = grown;
        body->capacity = capacity;
    }
    memcpy(body->data + body->length, data, length);
    body->length += length;
    return length;
}

/// A transfer ended: counts its body and frees it.
static void finish(CURL *easy) {
    struct body *body = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&body);
    *body->total += (long long)body->length;
    free(body->data);
    body->data = NULL;
    body->length = body->capacity = 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static CURL *make(const char *url, const char *cafile, int fresh, long long *bytes) {
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_CAINFO, cafile);
    curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    struct body *body = calloc(1, sizeof(struct body));  // freed with the process; one per handle
    body->easy = easy;
    body->total = bytes;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, body);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    // SESAME_BENCH_AUTH=basic:USER:PASSWORD or digest:USER:PASSWORD: answer that scheme.
    const char *auth = getenv("SESAME_BENCH_AUTH");
    if (auth && strchr(auth, ':')) {
        int digest = strncmp(auth, "digest:", 7) == 0;
        curl_easy_setopt(easy, CURLOPT_HTTPAUTH, digest ? CURLAUTH_DIGEST : CURLAUTH_BASIC);
        curl_easy_setopt(easy, CURLOPT_USERPWD, strchr(auth, ':') + 1);
    }
    // SESAME_BENCH_PIN=sha256//BASE64: the server's public key must match (CURLOPT_PINNEDPUBLICKEY).
    const char *pin = getenv("SESAME_BENCH_PIN");
    if (pin) curl_easy_setopt(easy, CURLOPT_PINNEDPUBLICKEY, pin);
    // SESAME_BENCH_CERT / SESAME_BENCH_KEY: a client certificate and key (PEM).
    const char *cert = getenv("SESAME_BENCH_CERT"), *key = getenv("SESAME_BENCH_KEY");
    if (cert && key) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, cert);
        curl_easy_setopt(easy, CURLOPT_SSLKEY, key);
    }
    // SESAME_BENCH_PROXY=http://USER:PASSWORD@HOST:PORT: through that proxy, any scheme it offers.
    const char *proxy = getenv("SESAME_BENCH_PROXY");
    if (proxy) {
        curl_easy_setopt(easy, CURLOPT_PROXY, proxy);
        curl_easy_setopt(easy, CURLOPT_PROXYAUTH, CURLAUTH_ANY);
    }
    // SESAME_BENCH_UPLOAD=FILE: POST it as the multipart field "file" (streamed by libcurl).
    const char *upload = getenv("SESAME_BENCH_UPLOAD");
    if (upload) {
        curl_mime *mime = curl_mime_init(easy);  // freed with the process; one per handle
        curl_mimepart *part = curl_mime_addpart(mime);
        curl_mime_name(part, "file");
        curl_mime_filedata(part, upload);
        curl_easy_setopt(easy, CURLOPT_MIMEPOST, mime);
    }
    // SESAME_BENCH_HTTP2: HTTP/2 over TLS, and wait for the connection being made rather than
    // opening one per handle, so that every stream shares it (as Sesame's do).
    if (getenv("SESAME_BENCH_HTTP2")) {
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    }
    if (fresh) {
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    }
    return easy;
}

static int check(CURLM *multi) {
    int left = 0;
    CURLMsg *message;
    int failures = 0;
    while ((message = curl_multi_info_read(multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        finish(message->easy_handle);
        long status = 0;
        curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        if (message->data.result != CURLE_OK || status != 200) {
            fprintf(stderr, "libcurl-driver: transfer failed: %s (status %ld)\n",
                    curl_easy_strerror(message->data.result), status);
            failures++;
        }
    }
    return failures;
}

static int spawn(char **argv) {
    pid_t pid = fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        const char *cpu = getenv("SESAME_BENCH_CPU");
        if (cpu != NULL) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(atoi(cpu), &set);
            if (sched_setaffinity(0, sizeof set, &set) != 0) {
                perror("libcurl-driver: sched_setaffinity");
                _exit(127);
            }
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    wait4(pid, &status, 0, &usage);
    fprintf(stderr, "peak-rss-kb %ld\n", usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "spawn") == 0) return spawn(argv + 2);
    if (argc < 5) {
        fprintf(stderr, "usage: %s keepalive|newconn|concurrent COUNT URL CAFILE [CONCURRENCY]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int count = atoi(argv[2]);
    const char *url = argv[3];
    const char *cafile = argv[4];
    int concurrency = argc > 5 ? atoi(argv[5]) : 1;
    int fresh = strcmp(mode, "newconn") == 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)concurrency);
    long long bytes = 0;
    int failures = 0;
    double startWall = now(), startCPU = cpu();
    if (strcmp(mode, "concurrent") == 0) {
        CURL **handles = calloc((size_t)concurrency, sizeof(CURL *));
        int started = 0, finished = 0, running = 0;
        for (int i = 0; i < concurrency && started < count; i++, started++) {
            handles[i] = make(url, cafile, 0, &bytes);
            curl_multi_add_handle(multi, handles[i]);
        }
        while (finished < count) {
            curl_multi_perform(multi, &running);
            int left = 0;
            CURLMsg *message;
            while ((message = curl_multi_info_read(multi, &left))) {
                if (message->msg != CURLMSG_DONE) continue;
                long status = 0;
                CURL *easy = message->easy_handle;
                finish(easy);
                curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
                if (message->data.result != CURLE_OK || status != 200) failures++;
                finished++;
                curl_multi_remove_handle(multi, easy);
                if (started < count) {
                    started++;
                    curl_multi_add_handle(multi, easy);  // the same handle again: its connection is reused
                } else {
                    curl_easy_cleanup(easy);
                }
            }
            if (finished < count) curl_multi_poll(multi, NULL, 0, 1000, NULL);
        }
        free(handles);
    } else {
        CURL *easy = make(url, cafile, fresh, &bytes);
        for (int i = 0; i < count; i++) {
            int running = 0;
            curl_multi_add_handle(multi, easy);
            do {
                curl_multi_perform(multi, &running);
                if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
            } while (running);
            failures += check(multi);
            curl_multi_remove_handle(multi, easy);
        }
        curl_easy_cleanup(easy);
    }
    double wall = now() - startWall, used = cpu() - startCPU;
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    if (failures) {
        fprintf(stderr, "libcurl-driver: %d transfers failed\n", failures);
        return 1;
    }
    printf("%.6f %.6f %lld\n", wall, used, bytes);
    return 0;
}
