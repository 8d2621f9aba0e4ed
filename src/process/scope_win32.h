/* Process scopes on Windows: the plain C core the Node-API glue (src/process/scope_napi.c)
 * uses for the `job` backend. A scope is a Job Object with
 * JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, named with 128 random bits so that the helper
 * program (src/process/scope_helper_win32.c) can open it and put itself inside before
 * it starts the command. Knows nothing of Node-API; functions return 0 (or a count) or
 * a negative errno. See docs/process-scopes.md. */
#ifndef AOS_PROCESS_SCOPE_WIN32_H
#define AOS_PROCESS_SCOPE_WIN32_H

#include <stddef.h>

/* "Local\agent-os-scope-" and 32 hex digits, NUL-terminated. */
#define AOS_SCOPE_JOB_NAME_LEN 54

typedef struct aos_scope_job aos_scope_job;

/* Creates a new named job that kills every process in it when its last handle closes.
 * `name` receives its name (AOS_SCOPE_JOB_NAME_LEN wide characters with the NUL). A
 * job of that name existing already is a refusal (-EEXIST), never a join. */
int aos_scope_job_create(aos_scope_job **out, wchar_t name[AOS_SCOPE_JOB_NAME_LEN]);

/* How many processes are in the job now (JobObjectBasicAccountingInformation). */
int aos_scope_job_active(aos_scope_job *job, unsigned long *active);

/* The ids of the processes in the job now: at most `cap` into `out`; *count gets how
 * many there are in all (more than `cap` when the list did not fit). */
int aos_scope_job_pids(aos_scope_job *job, unsigned long *out, size_t cap, size_t *count);

/* Ends every process in the job at once (TerminateJobObject, exit code 1). */
int aos_scope_job_terminate(aos_scope_job *job);

/* Closes the job's handle (every process still in it is killed by the system when
 * this was the last one). `job` may be NULL. */
void aos_scope_job_close(aos_scope_job *job);

#endif
