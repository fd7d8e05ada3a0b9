#include "quiet.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef _WIN32
int wt_capture_begin(void) { return -1; }
char* wt_capture_end(int token) {
    (void)token;
    return NULL;
}
#else

// The saved descriptor of the real stderr and the capture file, one capture
// at a time (the caller serialises them on its worker thread).
static int saved_fd = -1;
static FILE* capture;

int wt_capture_begin(void) {
    if (saved_fd >= 0) {
        return -1;
    }
    FILE* f = tmpfile();
    if (f == NULL) {
        return -1;
    }
    fflush(stderr);
    int saved = dup(2);
    if (saved < 0 || dup2(fileno(f), 2) < 0) {
        if (saved >= 0) {
            close(saved);
        }
        fclose(f);
        return -1;
    }
    saved_fd = saved;
    capture = f;
    return 1;
}

char* wt_capture_end(int token) {
    if (token < 0 || saved_fd < 0) {
        return NULL;
    }
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    saved_fd = -1;
    long n = ftell(capture);
    char* out = NULL;
    if (n > 0 && fseek(capture, 0, SEEK_SET) == 0) {
        out = malloc((size_t)n + 1);
        size_t got = fread(out, 1, (size_t)n, capture);
        out[got] = 0;
    }
    fclose(capture);
    capture = NULL;
    return out;
}
#endif
