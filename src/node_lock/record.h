/* node-lock's holder record: what a holder writes into the guard file where the
 * system keeps no table of lock holders (macOS, Windows, Linux without a readable
 * /proc/locks), and how any guard file's content is judged.
 *
 * A record is one line, at most AOS_LOCK_RECORD_MAX_BYTES long:
 *
 *     agent-os-lock/<version> <rest>\n
 *
 * The magic "agent-os-lock/" and a decimal version mark the file as a guard of this
 * package whatever follows; version 1's rest is the holder's pid in decimal. A later
 * version may change the rest: its file is still recognised as a guard (used, and
 * its record replaced), only its pid is not read. A bare number ("123\n") or any
 * other content is not a record, so a data file passed as a lock path by mistake is
 * never taken for a guard.
 *
 * Static functions, shared by src/node_lock/posix.c and src/node_lock/win32.c. */
#ifndef AOS_NODE_LOCK_RECORD_H
#define AOS_NODE_LOCK_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AOS_LOCK_RECORD_MAGIC "agent-os-lock/"
#define AOS_LOCK_RECORD_MAGIC_LEN (sizeof AOS_LOCK_RECORD_MAGIC - 1)
/* The longest record: magic, a version, a space, a rest and a newline. */
#define AOS_LOCK_RECORD_MAX_BYTES 64
/* The largest pid a version 1 record may name (Windows process ids are 32-bit). */
#define AOS_LOCK_RECORD_MAX_PID 0xFFFFFFFFLL

/* Writes the version 1 record naming `pid` into `buf` (at least
 * AOS_LOCK_RECORD_MAX_BYTES + 1 bytes); returns its length, or 0 when `pid` is out
 * of range. Formats by hand: no locale, no stdio. */
static inline int aos_lock_format_record(char *buf, size_t size, int64_t pid) {
  if (pid <= 0 || pid > AOS_LOCK_RECORD_MAX_PID || size < AOS_LOCK_RECORD_MAX_BYTES + 1) {
    return 0;
  }
  char digits[20];
  int nd = 0;
  while (pid > 0) {
    digits[nd++] = (char)('0' + pid % 10);
    pid /= 10;
  }
  memcpy(buf, AOS_LOCK_RECORD_MAGIC "1 ", AOS_LOCK_RECORD_MAGIC_LEN + 2);
  size_t n = AOS_LOCK_RECORD_MAGIC_LEN + 2;
  while (nd > 0) buf[n++] = digits[--nd];
  buf[n++] = '\n';
  return (int)n;
}

/* Whether the `n` bytes at `text` are a holder record (see above). When they are a
 * version 1 record, *pid is the pid it names; otherwise *pid is 0. */
static inline bool aos_lock_parse_record(const char *text, size_t n, int64_t *pid) {
  *pid = 0;
  if (n < AOS_LOCK_RECORD_MAGIC_LEN + 3 || n > AOS_LOCK_RECORD_MAX_BYTES) return false;
  if (memcmp(text, AOS_LOCK_RECORD_MAGIC, AOS_LOCK_RECORD_MAGIC_LEN) != 0) return false;
  if (text[n - 1] != '\n') return false;
  size_t i = AOS_LOCK_RECORD_MAGIC_LEN;
  uint32_t version = 0;
  size_t version_digits = 0;
  while (i < n && text[i] >= '0' && text[i] <= '9' && version_digits < 9) {
    version = version * 10 + (uint32_t)(text[i] - '0');
    version_digits++;
    i++;
  }
  if (version_digits == 0 || version == 0 || i >= n || text[i] != ' ') return false;
  i++;
  /* The rest: printable ASCII up to the one newline, which ends the file. */
  for (size_t j = i; j < n - 1; j++) {
    if (text[j] < 0x20 || text[j] > 0x7e) return false;
  }
  if (version != 1) return true;
  int64_t value = 0;
  size_t start = i;
  for (; i < n - 1; i++) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
    if (value > AOS_LOCK_RECORD_MAX_PID) return false;
  }
  if (i == start || text[start] == '0') return false;
  *pid = value;
  return true;
}

#endif
