#ifndef PLD_SQLITE_SHIM_H
#define PLD_SQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro around a cast that Swift cannot import.
static inline sqlite3_destructor_type pld_sqlite_transient(void) {
  return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic, which Swift cannot call. SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: "When enabled,
/// the database connection does not run a checkpoint and delete the WAL file when it is the last
/// connection to close."
static inline int pld_sqlite_set_no_checkpoint_on_close(sqlite3 *db, int on) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}

#endif
