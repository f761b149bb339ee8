import Foundation
import GRDB
import HPSyncModel

/// The store's schema, as named migrations. A migration is never edited once it has landed:
/// change the schema by appending a new one.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-initial") { db in
            try db.create(table: "item") { t in
                t.primaryKey("key", .text)
                t.column("name", .text).notNull()
                t.column("serialNumber", .text)
                t.column("valueInDollars", .integer).notNull()
                t.column("dateCreated", .integer).notNull()
                t.column("imageDigest", .blob)
                t.column("imageSize", .integer)
                t.column("stamp", .integer).notNull()
                t.column("origin", .blob).notNull()
                t.column("deleted", .boolean).notNull().defaults(to: false)
                t.column("seq", .integer).notNull().unique()
            }
            // Partial: most items have no image, and lookups are always by a digest.
            try db.create(
                index: "item_on_imageDigest", on: "item", columns: ["imageDigest"],
                condition: Column("imageDigest") != nil)
            try db.create(table: "meta") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("storeID", .blob).notNull()
                t.column("nodeID", .blob).notNull()
                t.column("hlcHighWater", .integer).notNull()
                t.column("lastSeq", .integer).notNull()
                t.column("schemaVersion", .integer).notNull()
                t.column("createdAt", .integer).notNull()
            }
            try db.create(table: "peer") { t in
                t.primaryKey("name", .text)
                t.column("nodeID", .blob).notNull().unique()
                t.column("address", .text)
                t.column("permission", .text).notNull().check { ["read", "read-write"].contains($0) }
                t.column("addedAt", .integer).notNull()
            }
            try db.create(table: "checkpoint") { t in
                t.column("peerStoreID", .blob).notNull()
                t.column("direction", .text).notNull().check { ["pull", "push"].contains($0) }
                t.column("seq", .integer).notNull()
                t.column("updatedAt", .integer).notNull()
                t.primaryKey(["peerStoreID", "direction"])
            }
            try db.create(table: "pendingImage") { t in
                t.primaryKey("key", .text)
                t.column("tempName", .text).notNull()
            }
        }
        // Per peer and direction: when the last run succeeded or failed, for `status` and
        // `status --check`. Keyed by peer name; rows of removed peers are ignored.
        migrator.registerMigration("v2-peer-sync") { db in
            try db.create(table: "peerSync") { t in
                t.column("peerName", .text).notNull()
                t.column("direction", .text).notNull().check { ["pull", "push"].contains($0) }
                t.column("lastSuccessAt", .integer)
                t.column("lastFailureAt", .integer)
                t.column("lastError", .text)
                t.primaryKey(["peerName", "direction"])
            }
        }
        // Versions a pull deleted or overwrote, kept for a retention period (`hp-sync trash`).
        // Their images are hard links in trash/<SHA-256 hex>, shared by rows with one digest.
        migrator.registerMigration("v3-trash") { db in
            try db.create(table: "trash") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("key", .text).notNull().indexed()
                t.column("name", .text).notNull()
                t.column("serialNumber", .text)
                t.column("valueInDollars", .integer).notNull()
                t.column("dateCreated", .integer).notNull()
                t.column("imageDigest", .blob)
                t.column("imageSize", .integer)
                t.column("stamp", .integer).notNull()
                t.column("origin", .blob).notNull()
                t.column("reason", .text).notNull().check { ["deleted", "overwritten"].contains($0) }
                t.column("trashedAt", .integer).notNull().indexed()
            }
        }
        // Invitations (`hp-sync invite`, `peer join`): only the SHA-256 of each one-time secret
        // is kept. A redeemed row stays, marked with who used it and when, so a second use is
        // told "already used" rather than "unknown".
        migrator.registerMigration("v4-invitations") { db in
            try db.create(table: "invitation") { t in
                t.primaryKey("secretHash", .blob).check { length($0) == 32 }
                t.column("permission", .text).notNull().check { ["read", "read-write"].contains($0) }
                t.column("name", .text)
                t.column("createdAt", .integer).notNull()
                t.column("expiresAt", .integer).notNull()
                t.column("usedAt", .integer)
                t.column("usedBy", .blob)
            }
        }
        // Tombstone garbage collection (`hp-sync gc`): the horizon this store has collected up to,
        // when peers last synced from us (the gc clamp), and the keys a full reconciliation with a
        // source that collected tombstones has listed so far (resumable, bounded memory).
        migrator.registerMigration("v5-gc") { db in
            try db.alter(table: "meta") { t in
                t.add(column: "gcHorizonStamp", .integer).notNull().defaults(to: 0)
                t.add(column: "gcHorizonSeq", .integer).notNull().defaults(to: 0)
            }
            try db.alter(table: "peerSync") { t in
                t.add(column: "lastServedAt", .integer)
            }
            try db.create(table: "reconcile") { t in
                t.primaryKey("peerStoreID", .blob)
                t.column("horizon", .integer).notNull()
                t.column("sourceNode", .blob).notNull()
                t.column("startedAt", .integer).notNull()
            }
            try db.create(table: "reconcileListed", options: .withoutRowID) { t in
                t.column("peerStoreID", .blob).notNull()
                t.column("key", .text).notNull()
                t.primaryKey(["peerStoreID", "key"])
            }
        }
        // The keys `hp-sync gc` collected, key only: `import-homepwner` never revives a deleted
        // key, and once the tombstone row is gone this is how it still knows the key was deleted.
        migrator.registerMigration("v6-gc-collected-keys") { db in
            try db.create(table: "gcCollectedKey", options: .withoutRowID) { t in
                t.primaryKey("key", .text)
            }
        }
        // Items whose image this store names but cannot read intact (verify found it missing or
        // damaged, an import came without it, a peer asked for it and the bytes were wrong): a
        // pull asks its source for them by digest (protocol version 3), `verify --repair --from`
        // asks any peer. Key only: the item's row says which digest is wanted.
        migrator.registerMigration("v7-images-to-heal") { db in
            try db.create(table: "imageToHeal", options: .withoutRowID) { t in
                t.primaryKey("key", .text)
                t.column("foundAt", .integer).notNull()
            }
        }
        // The highest stamp received from another node, kept apart from the high-water mark
        // (which local edits raise too): `clock reset` restamps above it. Existing stores start
        // from the newest version another node made that they still hold.
        migrator.registerMigration("v8-remote-high-water") { db in
            try db.alter(table: "meta") { t in
                t.add(column: "remoteHighWater", .integer).notNull().defaults(to: 0)
            }
            try db.execute(
                sql: """
                    UPDATE meta SET remoteHighWater =
                        COALESCE((SELECT MAX(stamp) FROM item WHERE origin != meta.nodeID), 0)
                    """)
        }
        // Counts every pull needs, without reading the whole item table: the live items (the
        // mass-deletion guard's base) are all rows less the tombstones, and the live images
        // (the image check, `status`) are read from an index of their own. Both indexes hold only
        // the rows they name: a write touches them only for a tombstone or a live image.
        migrator.registerMigration("v9-count-indexes") { db in
            // Written out: each condition must read exactly as the queries that use it do.
            try db.execute(
                sql: """
                    CREATE INDEX item_tombstone ON item(stamp, deleted) WHERE deleted = 1;
                    CREATE INDEX item_live_image ON item(key, imageSize) WHERE deleted = 0 AND imageDigest IS NOT NULL;
                    """)
        }
        // The runs of stamps this node issued for its own changes (`LocalStampRun`): `clock
        // reset` restamps above the highest issued below its limit, replaced versions included.
        // A store from before this migration has no such record; when its mark is not ahead of
        // this machine's clock, every stamp up to the mark counts as issued (an over-estimate
        // that only keeps a later reset's restamps above that mark).
        migrator.registerMigration("v10-local-stamps") { db in
            try db.execute(sql: "CREATE TABLE localStamp (lowest INTEGER PRIMARY KEY, highest INTEGER NOT NULL)")
            let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
            try db.execute(
                sql: """
                    INSERT INTO localStamp (lowest, highest)
                    SELECT 1, hlcHighWater FROM meta WHERE hlcHighWater > 0 AND hlcHighWater <= ?
                    """,
                arguments: [Int64(bitPattern: VersionStamp(milliseconds: now).rawValue)])
        }
        // Blind peers (Protocol.md 5.8). A blind store keeps `blindEntry` (sealed records by
        // record ID) and `blindHead`, and its meta says it is blind; a trusted node keeps, per
        // blind peer it talks to, a mirror of that peer's entries (`blindMirror`), checked against
        // the head the trusted nodes seal, and what it last saw there (`blindPeerState`). The
        // mirror and the blind store's entries are rowid tables: rows arrive in seq order, so a
        // table grows at its end and a page is read in order; only the ID index takes random
        // writes (a WITHOUT ROWID table keyed by the random IDs cost a blind push of M ~500k
        // page writes on each side).
        migrator.registerMigration("v11-blind") { db in
            try db.execute(sql: "ALTER TABLE meta ADD COLUMN blind INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "ALTER TABLE peer ADD COLUMN blind INTEGER NOT NULL DEFAULT 0")
            try db.execute(
                sql: """
                    CREATE TABLE blindEntry (
                      id BLOB NOT NULL UNIQUE, stamp INTEGER NOT NULL, origin BLOB NOT NULL,
                      seq INTEGER NOT NULL UNIQUE, sealed BLOB NOT NULL, photoID BLOB,
                      photoSize INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX blindEntryPhoto ON blindEntry(photoID) WHERE photoID IS NOT NULL;
                    CREATE TABLE blindHead (
                      one INTEGER PRIMARY KEY CHECK (one = 1), epoch INTEGER NOT NULL, sealed BLOB NOT NULL);
                    CREATE TABLE blindMirror (
                      peerNode BLOB NOT NULL, id BLOB NOT NULL, stamp INTEGER NOT NULL, origin BLOB NOT NULL,
                      seq INTEGER NOT NULL, photoID BLOB, photoSize INTEGER NOT NULL DEFAULT 0,
                      itemKey TEXT, deleted INTEGER, damaged INTEGER NOT NULL DEFAULT 0);
                    CREATE UNIQUE INDEX blindMirrorID ON blindMirror(peerNode, id);
                    CREATE INDEX blindMirrorSeq ON blindMirror(peerNode, seq);
                    CREATE INDEX blindMirrorPhoto ON blindMirror(peerNode, photoID) WHERE photoID IS NOT NULL;
                    CREATE TABLE blindPeerState (
                      peerNode BLOB PRIMARY KEY, storeID BLOB NOT NULL, throughSeq INTEGER NOT NULL,
                      epoch INTEGER NOT NULL);
                    """)
        }
        // Field merge (Protocol.md 5.9): what an item row cannot say of its merge state (its
        // fields' own versions and bases, the fields a tombstone keeps) in `fields`, NULL for
        // an item that is one whole record; and the values that lost a clash, until an edit
        // resolves them. Every existing row is a whole record: nothing to rewrite. A blind
        // peer's mirror keeps the merge digest of each entry this node sealed or opened (NULL:
        // not known yet), since two states of one version can differ. The joined items (their
        // `fields` format byte 5 or 6, `StoredMergeState`), which a node restamps before it
        // sends to a version-4 peer, are few: a partial index finds them without a scan.
        migrator.registerMigration("v12-field-merge") { db in
            try db.execute(
                sql: """
                    ALTER TABLE item ADD COLUMN fields BLOB;
                    ALTER TABLE blindMirror ADD COLUMN mergeDigest INTEGER;
                    CREATE TABLE conflict (
                      key TEXT NOT NULL, field TEXT NOT NULL, stamp INTEGER NOT NULL, origin BLOB NOT NULL,
                      baseStamp INTEGER, baseOrigin BLOB, text TEXT, integer INTEGER, imageDigest BLOB,
                      imageSize INTEGER,
                      PRIMARY KEY (key, field, stamp, origin)) WITHOUT ROWID;
                    CREATE INDEX conflict_on_imageDigest ON conflict(imageDigest) WHERE imageDigest IS NOT NULL;
                    CREATE TABLE itemFields (key TEXT PRIMARY KEY NOT NULL, fields BLOB NOT NULL) WITHOUT ROWID;
                    CREATE INDEX itemFields_on_joined ON itemFields(key) WHERE fields >= x'0A';
                    """)
        }
        // Blind stores of packs (Docs/blind-packs-design.md): per blind peer, one row per pack
        // this node read or wrote: its plaintext size, whether its records were applied here,
        // and what it holds (`BlindPackIndex`'s bytes, opaque to the store). A row per pack, not
        // per item: about a thousand at a million items. And the sealed photos a pull found
        // damaged there, which a push uploads again though a pack names them.
        migrator.registerMigration("v13-blind-packs") { db in
            try db.execute(
                sql: """
                    CREATE TABLE blindPack (
                      peerNode BLOB NOT NULL, id BLOB NOT NULL, plainSize INTEGER NOT NULL,
                      applied INTEGER NOT NULL DEFAULT 0, contents BLOB NOT NULL,
                      PRIMARY KEY (peerNode, id)) WITHOUT ROWID;
                    CREATE TABLE blindDamagedPhoto (
                      peerNode BLOB NOT NULL, photoID BLOB NOT NULL, PRIMARY KEY (peerNode, photoID)) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    /// The schema version written to `meta` at creation.
    static let schemaVersion = 1
}
