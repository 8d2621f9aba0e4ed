/* Process scopes on Windows: Job Objects. See src/process/scope_win32.h. */
#include "process/scope_win32.h"

#include <windows.h>
#include <ntsecapi.h> /* RtlGenRandom (advapi32's SystemFunction036) */

#include <errno.h>
#include <stdlib.h>
#include <wchar.h>

struct aos_scope_job {
  HANDLE handle;
};

static int aos_scope__errno(DWORD err) {
  switch (err) {
    case ERROR_ACCESS_DENIED:
      return -EACCES;
    case ERROR_ALREADY_EXISTS:
      return -EEXIST;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      return -ENOMEM;
    case ERROR_INVALID_HANDLE:
      return -EBADF;
    default:
      return -EIO;
  }
}

int aos_scope_job_create(aos_scope_job **out, wchar_t name[AOS_SCOPE_JOB_NAME_LEN]) {
  *out = NULL;
  unsigned char rnd[16];
  if (!RtlGenRandom(rnd, sizeof rnd)) return -EIO;
  static const wchar_t prefix[] = L"Local\\agent-os-scope-";
  static const wchar_t hex[] = L"0123456789abcdef";
  size_t n = sizeof prefix / sizeof prefix[0] - 1;
  wmemcpy(name, prefix, n);
  for (size_t i = 0; i < sizeof rnd; i++) {
    name[n++] = hex[rnd[i] >> 4];
    name[n++] = hex[rnd[i] & 15];
  }
  name[n] = L'\0';
  aos_scope_job *job = calloc(1, sizeof *job);
  if (job == NULL) return -ENOMEM;
  SetLastError(0);
  job->handle = CreateJobObjectW(NULL, name);
  DWORD err = GetLastError();
  if (job->handle == NULL || err == ERROR_ALREADY_EXISTS) {
    /* Someone made this name first: never join a job one did not create. */
    int rc = aos_scope__errno(job->handle != NULL ? ERROR_ALREADY_EXISTS : err);
    if (job->handle != NULL) CloseHandle(job->handle);
    free(job);
    return rc;
  }
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
  ZeroMemory(&li, sizeof li);
  li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job->handle, JobObjectExtendedLimitInformation, &li, sizeof li)) {
    int rc = aos_scope__errno(GetLastError());
    CloseHandle(job->handle);
    free(job);
    return rc;
  }
  *out = job;
  return 0;
}

int aos_scope_job_active(aos_scope_job *job, unsigned long *active) {
  JOBOBJECT_BASIC_ACCOUNTING_INFORMATION a;
  if (!QueryInformationJobObject(job->handle, JobObjectBasicAccountingInformation, &a, sizeof a, NULL)) {
    return aos_scope__errno(GetLastError());
  }
  *active = a.ActiveProcesses;
  return 0;
}

int aos_scope_job_pids(aos_scope_job *job, unsigned long *out, size_t cap, size_t *count) {
  *count = 0;
  /* Grown until the list fits (processes may join between two queries). */
  for (size_t room = 64;; room *= 2) {
    size_t bytes = sizeof(JOBOBJECT_BASIC_PROCESS_ID_LIST) + room * sizeof(ULONG_PTR);
    JOBOBJECT_BASIC_PROCESS_ID_LIST *list = malloc(bytes);
    if (list == NULL) return -ENOMEM;
    BOOL ok = QueryInformationJobObject(job->handle, JobObjectBasicProcessIdList, list, (DWORD)bytes, NULL);
    DWORD err = ok ? 0 : GetLastError();
    if (ok || err == ERROR_MORE_DATA) {
      DWORD assigned = list->NumberOfAssignedProcesses;
      DWORD listed = list->NumberOfProcessIdsInList;
      if (assigned > listed && room < 1u << 20) {
        free(list);
        continue;
      }
      for (DWORD i = 0; i < listed && i < cap; i++) out[i] = (unsigned long)list->ProcessIdList[i];
      *count = listed;
      free(list);
      return 0;
    }
    free(list);
    return aos_scope__errno(err);
  }
}

int aos_scope_job_terminate(aos_scope_job *job) {
  if (!TerminateJobObject(job->handle, 1)) return aos_scope__errno(GetLastError());
  return 0;
}

void aos_scope_job_close(aos_scope_job *job) {
  if (job == NULL) return;
  CloseHandle(job->handle);
  free(job);
}
