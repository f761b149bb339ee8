#ifndef CHPSYNC_WAL_WRITER_H
#define CHPSYNC_WAL_WRITER_H

#include <sqlite3.h>
#include <stdint.h>

/// Registers "hp-sync-wal", a VFS over SQLite's default one that gathers the small writes SQLite
/// makes to a WAL (a 24-byte frame header, then the page, for every page of a commit) into
/// writes of up to 64 KiB. Everything else passes through. Made the default VFS, once, so every
/// connection opened afterwards uses it. Returns an SQLite result code.
int hp_wal_writer_register(void);

/// The writes to one connection's WAL since it was opened: those SQLite asked for, and those made.
typedef struct {
    int64_t requested;
    int64_t issued;
} hp_wal_writer_counts;

/// The file-control operation behind `hp_wal_writer_counts_of` (SQLite's own stop below 100).
#define HP_WAL_WRITER_COUNTS 0x48500001

/// Reads the counts of `connection`'s WAL: SQLITE_OK, or SQLITE_NOTFOUND when its writes are not
/// gathered (not opened through this VFS, not in WAL mode, or no WAL open yet).
int hp_wal_writer_counts_of(sqlite3 *connection, hp_wal_writer_counts *counts);

#endif
