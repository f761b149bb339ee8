import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// Changes made on this node: each is one transaction, with the next stamp and seq and this
/// node as origin.
extension Store {
    /// Adds a new item, copying its image (if any) into the store.
    public func add(_ draft: ItemDraft) throws -> Item {
        try Self.validate(name: draft.name, serial: draft.serialNumber, value: draft.valueInDollars, requireName: true)
        let key = draft.key ?? ItemKey.random()
        let image = try draft.imageFile.map { try stageLocalImage($0) }
        return try commitLocal(key: key, image: image, fields: nil) { db, clock in
            let existing = try ItemRecord.fetch(db, key: key)
            if let existing, !existing.deleted { throw StoreError.keyExists(key) }
            let created = draft.dateCreatedMilliseconds ?? Int64(clock.nowMilliseconds)
            // A re-add replaces the key's tombstone.
            let replaced = VersionStamp(rawValue: UInt64(bitPattern: existing?.stamp ?? 0))
            return Item(
                key: key, name: draft.name, serialNumber: draft.serialNumber, valueInDollars: draft.valueInDollars,
                dateCreatedMilliseconds: created, image: image?.ref,
                version: Version(stamp: clock.nextLocalStamp(replacing: replaced), origin: nodeID))
        }
    }

    /// Changes an item's fields; the image is left as it is.
    public func edit(_ key: ItemKey, _ edit: ItemEdit) throws -> Item {
        if let name = edit.name { try Self.validate(name: name, serial: nil, value: nil, requireName: true) }
        if case .set(let serial) = edit.serialNumber {
            try Self.validate(name: "x", serial: serial, value: nil, requireName: false)
        }
        try Self.validate(name: "x", serial: nil, value: edit.valueInDollars, requireName: false)
        var fields = FieldEdit(name: edit.name, valueInDollars: edit.valueInDollars)
        switch edit.serialNumber {
        case .keep: break
        case .set(let serial): fields.serialNumber = .some(serial)
        case .clear: fields.serialNumber = .some(nil)
        }
        return try commitLocal(key: key, image: nil, fields: fields) { db, clock in
            var item = try Self.liveItem(db, key)
            if let name = edit.name { item.name = name }
            switch edit.serialNumber {
            case .keep: break
            case .set(let serial): item.serialNumber = serial
            case .clear: item.serialNumber = nil
            }
            if let value = edit.valueInDollars { item.valueInDollars = value }
            item.version = Version(stamp: clock.nextLocalStamp(replacing: item.version.stamp), origin: nodeID)
            return item
        }
    }

    /// Replaces an item's image with a copy of `file` (JPEG, PNG, HEIC or GIF).
    public func setImage(_ key: ItemKey, from file: URL) throws -> Item {
        let image = try stageLocalImage(file)
        return try commitLocal(key: key, image: image, fields: FieldEdit(photo: .some(image.ref))) { db, clock in
            var item = try Self.liveItem(db, key)
            item.image = image.ref
            item.version = Version(stamp: clock.nextLocalStamp(replacing: item.version.stamp), origin: nodeID)
            return item
        }
    }

    /// Removes an item's image; the file is unlinked after the row commits.
    public func removeImage(_ key: ItemKey) throws -> Item {
        var dropped: String?
        let item = try write { db -> Item in
            var item = try Self.liveItem(db, key)
            dropped = try ImageJournal(db).drop(key: key)
            guard item.image != nil else { return item }
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            item.image = nil
            item.version = Version(stamp: clock.nextLocalStamp(replacing: item.version.stamp), origin: nodeID)
            let row = try ItemRecord.fetch(db, key: key)
            let state = try Self.locallyEdited(db, row, item: item, edit: FieldEdit(photo: .some(nil)))
            try Self.writeMergeState(db, state, seq: clock.nextSeq(), previous: row)
            try clock.save(db)
            return item
        }
        try unlinkImagesIfUnused([key], temporaries: dropped.map { [$0] } ?? [])
        return item
    }

    /// Deletes all `keys` in one transaction: tombstones commit first, files are unlinked after.
    /// An unknown or already deleted key fails the whole call and nothing changes. With
    /// `keepInTrash` the deleted versions (and their images) go to the trash in the same
    /// transaction, restorable like those a pull replaced (the web app's "Remove selected").
    public func delete(_ keys: [ItemKey], keepInTrash: Bool = false) throws -> ChangeSet {
        var unique: [ItemKey] = []
        var seen = Set<ItemKey>()
        for key in keys where seen.insert(key).inserted { unique.append(key) }
        var dropped: [String] = []
        try write { db in
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            var trashInsertion = TrashInsertion(db, images: images, trash: trashDirectory)
            for key in unique {
                guard let row = try ItemRecord.fetch(db, key: key) else { throw StoreError.unknownKey(key.rawValue) }
                guard !row.deleted else { throw StoreError.alreadyDeleted(key) }
                if keepInTrash {
                    try trashInsertion.add(replaced: row, deleted: true, now: self.clock.nowMilliseconds())
                }
                let replaced = VersionStamp(rawValue: UInt64(bitPattern: row.stamp))
                let state = try Self.locallyDeleted(
                    db, row, at: Version(stamp: clock.nextLocalStamp(replacing: replaced), origin: nodeID))
                try Self.writeMergeState(db, state, seq: clock.nextSeq(), previous: row)
                // The tombstone keeps the photo field, which a later join can bring back: its
                // bytes stay in the trash folder until the tombstone is collected (Protocol.md 5.9).
                trashInsertion.addPhoto(row.imageRef, at: images.finalPath(key), keptBy: state)
                if let temp = try ImageJournal(db).drop(key: key) { dropped.append(temp) }
            }
            try trashInsertion.finish()
            try clock.save(db)
        }
        try unlinkImagesIfUnused(unique, temporaries: dropped)
        return ChangeSet(deleted: unique)
    }

    // MARK: - Helpers

    /// Copies a local image file into a temporary, checking format and size.
    func stageLocalImage(_ file: URL) throws -> (name: String, ref: ImageRef) {
        let staged = try images.writeTemp(copying: file, maxBytes: configuration.maxImageBytes, validate: true)
        // A hook that throws here simulates a crash: the temporary stays behind for the sweep.
        try configuration.testHooks.afterTempWritten?()
        return staged
    }

    /// Commits the item `body` builds with the next seq, journals its new image, then renames the
    /// image into place. On failure the temporary is removed.
    ///
    /// `fields`: the fields the change sets (to the item's values), which resolves their
    /// conflicts; the others keep their own versions. nil sets them all (a new item, a restore).
    func commitLocal(
        key: ItemKey, image: (name: String, ref: ImageRef)?, fields: FieldEdit?,
        _ body: (Database, inout ChangeClock) throws -> Item
    ) throws -> Item {
        var superseded: String?
        let item: Item
        do {
            item = try write { db -> Item in
                var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
                let item = try body(db, &clock)
                let row = try ItemRecord.fetch(db, key: key)
                let state = try Self.locallyEdited(db, row, item: item, edit: fields ?? FieldEdit(settingAllOf: item))
                try Self.writeMergeState(db, state, seq: clock.nextSeq(), previous: row)
                if let image { superseded = try ImageJournal(db).record(key: key, tempName: image.name) }
                try clock.save(db)
                return item
            }
        } catch {
            if let image { FileIO.unlinkIfPresent(images.tempPath(image.name)) }
            throw error
        }
        if let superseded { FileIO.unlinkIfPresent(images.tempPath(superseded)) }
        if let image { try finalizeImage(key: key, tempName: image.name) }
        return item
    }

    static func liveItem(_ db: Database, _ key: ItemKey) throws -> Item {
        guard let row = try ItemRecord.fetch(db, key: key) else { throw StoreError.unknownKey(key.rawValue) }
        guard !row.deleted else { throw StoreError.alreadyDeleted(key) }
        return try row.item()
    }

    /// Checks a name, serial and value against the store's limits (`ItemLimits`), throwing the
    /// `StoreError` an edit would; importers call it on every item before writing any.
    package static func validate(name: String, serial: String?, value: Int64?, requireName: Bool) throws {
        if requireName && name.isEmpty { throw StoreError.invalidName("the name is empty; give a name") }
        if name.utf8.count > ItemLimits.maxNameBytes {
            throw StoreError.invalidName("longer than \(ItemLimits.maxNameBytes) bytes; shorten it")
        }
        if let serial, serial.utf8.count > ItemLimits.maxSerialBytes {
            throw StoreError.invalidSerial("longer than \(ItemLimits.maxSerialBytes) bytes; shorten it")
        }
        if let value, !ItemLimits.valueInDollars.contains(value) { throw StoreError.invalidValue(value) }
    }
}
