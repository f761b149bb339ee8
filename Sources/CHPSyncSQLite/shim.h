#ifndef CHPSYNC_SQLITE_SHIM_H
#define CHPSYNC_SQLITE_SHIM_H

#include <sqlite3.h>

/// sqlite3_db_config is variadic, which Swift cannot call: this sets one option of it.
/// Leaves the WAL as it is when the connection closes instead of checkpointing it into the
/// database (the commits in it are durable already; the next open reads them, and the
/// automatic checkpoint of a later commit folds them in).
static inline int hp_sqlite_keep_wal_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

#endif
