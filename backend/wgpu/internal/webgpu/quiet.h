// Capturing what the native libraries print on the process's stderr.
#ifndef WEBTENSOR_QUIET_H
#define WEBTENSOR_QUIET_H

// wt_capture_begin points file descriptor 2 at a temporary file and returns
// a token for wt_capture_end, or -1 when capturing is not possible (the
// output then goes to stderr as usual).
int wt_capture_begin(void);

// wt_capture_end restores file descriptor 2 and returns what was written
// meanwhile, malloc'ed (the caller frees it), or NULL for nothing.
char* wt_capture_end(int token);

#endif
