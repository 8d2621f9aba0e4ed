/* agent_os_scope_helper.exe: the program process scopes start commands through on
 * Windows (the `job` backend, see docs/process-scopes.md). Built beside the binding by
 * binding.gyp (and by scripts/platforms/cross-build.js for the win32-x64 prebuild).
 *
 *   agent_os_scope_helper job <job name> <d|-> <file> <command line>
 *
 * Opens the scope's Job Object by the name the binding chose (128 random bits; only
 * the Node process that created it holds a handle), puts itself inside and closes
 * that handle, and only then starts the command: every process the command starts is
 * created inside the job, and the job does not allow breaking away. The command gets
 * this process's standard handles and its whole startup information (so the C
 * runtime's descriptor table passes too), its environment and working directory (which
 * Node gave this process from the caller's options), and `d` (`options.detached`)
 * gives it DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP, as libuv would have. `file` is
 * looked up as libuv looks up what it spawns (below), and the command line is the one
 * libuv would have built for it. The helper waits for the command and exits with its
 * exit code, unchanged.
 *
 * The helper keeps no handle of the job: the Node process's handle is the only one,
 * so when Node ends in any way the system closes it and JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
 * ends every process in the job, this helper included.
 *
 * Exit status 125: the scope could not be entered (the command did not run); 127: the
 * command was not found; 126: it was found and could not be started. Console control
 * events (Ctrl-C, Ctrl-Break) are left to the command: the helper handles them by
 * doing nothing (a handler, not SetConsoleCtrlHandler(NULL, TRUE), whose ignoring the
 * command would inherit) and exits when the command does. */
#include <windows.h>

#include <stdbool.h>
#include <stdlib.h>
#include <wchar.h>

#define AOS_PATH_MAX 32768

static BOOL WINAPI aos_scope__ctrl(DWORD type) {
  (void)type;
  return TRUE; /* the command decides; the helper exits with it */
}

static bool aos_scope__is_file(const wchar_t *path) {
  DWORD attrs = GetFileAttributesW(path);
  return attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

/* Tries `dir` (may be empty: the working directory) joined with `name`, as it is when
 * the name has an extension, then with ".com" and ".exe" appended. */
static bool aos_scope__try(const wchar_t *dir, size_t dirlen, const wchar_t *name, bool has_ext, wchar_t *out) {
  size_t namelen = wcslen(name);
  if (dirlen + 1 + namelen + 5 > AOS_PATH_MAX) return false;
  size_t n = 0;
  if (dirlen > 0) {
    wmemcpy(out, dir, dirlen);
    n = dirlen;
    if (out[n - 1] != L'\\' && out[n - 1] != L'/' && out[n - 1] != L':') out[n++] = L'\\';
  }
  wmemcpy(out + n, name, namelen);
  n += namelen;
  out[n] = L'\0';
  if (has_ext && aos_scope__is_file(out)) return true;
  static const wchar_t *const exts[] = {L".com", L".exe"};
  for (size_t i = 0; i < 2; i++) {
    wmemcpy(out + n, exts[i], 5);
    if (aos_scope__is_file(out)) return true;
  }
  return false;
}

/* libuv's search for the file to spawn (src/win/process.c, search_path): a name with a
 * directory part is looked for there only; a bare name in the working directory, then
 * in each directory of PATH (quotes around an entry removed). The literal name is
 * tried when it has an extension, then ".com" and ".exe" are appended. */
static bool aos_scope__search(const wchar_t *file, wchar_t *out) {
  const wchar_t *base = file;
  for (const wchar_t *p = file; *p != L'\0'; p++) {
    if (*p == L'\\' || *p == L'/' || *p == L':') base = p + 1;
  }
  if (*base == L'\0' || wcscmp(base, L".") == 0 || wcscmp(base, L"..") == 0) return false;
  const wchar_t *dot = wcsrchr(base, L'.');
  bool has_ext = dot != NULL && dot != base;
  if (base != file) {
    return aos_scope__try(file, (size_t)(base - file), base, has_ext, out);
  }
  if (aos_scope__try(L"", 0, base, has_ext, out)) return true;
  static wchar_t path[AOS_PATH_MAX];
  DWORD len = GetEnvironmentVariableW(L"PATH", path, AOS_PATH_MAX);
  if (len == 0 || len >= AOS_PATH_MAX) return false;
  for (wchar_t *p = path; *p != L'\0';) {
    wchar_t *end = wcschr(p, L';');
    if (end == NULL) end = p + wcslen(p);
    wchar_t *dir = p;
    size_t dirlen = (size_t)(end - p);
    if (dirlen >= 2 && dir[0] == L'"' && dir[dirlen - 1] == L'"') {
      dir++;
      dirlen -= 2;
    }
    if (dirlen > 0 && aos_scope__try(dir, dirlen, base, has_ext, out)) return true;
    p = *end == L'\0' ? end : end + 1;
  }
  return false;
}

int wmain(int argc, wchar_t **argv) {
  if (argc != 6 || wcscmp(argv[1], L"job") != 0) return 2;
  /* In the job first: nothing runs before the helper is inside it. */
  HANDLE job = OpenJobObjectW(JOB_OBJECT_ASSIGN_PROCESS, FALSE, argv[2]);
  if (job == NULL) return 125;
  BOOL in = AssignProcessToJobObject(job, GetCurrentProcess());
  CloseHandle(job);
  if (!in) return 125;

  SetConsoleCtrlHandler(aos_scope__ctrl, TRUE);
  static wchar_t app[AOS_PATH_MAX];
  if (!aos_scope__search(argv[4], app)) return 127;
  size_t len = wcslen(argv[5]);
  wchar_t *cmdline = malloc((len + 1) * sizeof *cmdline); /* CreateProcessW may write to it */
  if (cmdline == NULL) return 125;
  wmemcpy(cmdline, argv[5], len + 1);

  STARTUPINFOW si;
  GetStartupInfoW(&si);
  si.cb = sizeof si;
  DWORD flags = CREATE_UNICODE_ENVIRONMENT;
  if (argv[3][0] == L'd') flags |= DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP;
  PROCESS_INFORMATION pi;
  if (!CreateProcessW(app, cmdline, NULL, NULL, TRUE, flags, NULL, NULL, &si, &pi)) {
    DWORD err = GetLastError();
    free(cmdline);
    return err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ? 127 : 126;
  }
  free(cmdline);
  CloseHandle(pi.hThread);
  DWORD code = 1;
  if (WaitForSingleObject(pi.hProcess, INFINITE) != WAIT_OBJECT_0 || !GetExitCodeProcess(pi.hProcess, &code)) {
    code = 1; /* cannot happen with a handle of our own; the command stays in the scope */
  }
  CloseHandle(pi.hProcess);
  ExitProcess(code);
}
