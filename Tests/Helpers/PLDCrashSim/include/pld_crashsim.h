#ifndef PLD_CRASHSIM_H
#define PLD_CRASHSIM_H

/* A fault-injecting wrapper around SQLite's "unix" VFS, for the reliability tests only (it is not part of
   the PersistentLiveData library product).

   Power loss: every xWrite not yet followed by an xSync of the same file is remembered with the bytes it
   overwrote. After `crash_after_ops` xWrite/xSync/xTruncate/xDelete calls the VFS "loses power": it
   reverts a random subset of the unsynced writes (each kept, dropped, or torn at 512-byte sectors) and
   _exit(99)s, like a machine whose disk cache never reached the platter. Just before, it writes
   "crash NANOSECONDS\n" (CLOCK_MONOTONIC) to standard output.

   I/O errors: the `at`-th xRead/xWrite/xSync/xTruncate on a file whose name starts with a prefix fails
   with SQLITE_IOERR_READ/WRITE/FSYNC/TRUNCATE; if `persistent`, every later one fails too, until
   disarmed. Other files pass straight through, so other connections of the process are unaffected. */

/* Registers the VFS "pld_crashsim" as the default VFS (idempotent). crash_after_ops <= 0: never crash.
   Returns 0 (SQLITE_OK) on success. */
int pld_crashsim_register(long crash_after_ops, unsigned int seed);

/* Arms I/O-error injection for files whose path starts with `path_prefix` (NULL or "": every file).
   at <= 0 disarms. Resets the operation and hit counters. */
void pld_crashsim_set_ioerr(long at, int persistent, const char *path_prefix);

/* How many operations failed since the last pld_crashsim_set_ioerr. */
long pld_crashsim_ioerr_hits(void);

/* How many matching operations were counted since the last pld_crashsim_set_ioerr. */
long pld_crashsim_ioerr_ops(void);

/* The kind of the first failed operation: 0 none, 1 read, 2 write, 3 sync, 4 truncate. */
int pld_crashsim_ioerr_first_kind(void);

#endif
