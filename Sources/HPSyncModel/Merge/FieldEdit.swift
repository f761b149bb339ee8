/// The fields of an item, as the merge and the conflicts view name them.
public enum ItemField: String, CaseIterable, Hashable, Sendable, Codable {
    case name, serialNumber, valueInDollars, dateCreated, photo
}

/// The fields one local change sets; a nil member leaves its field as it is.
public struct FieldEdit: Hashable, Sendable {
    public var name: String?
    public var serialNumber: String??
    public var valueInDollars: Int64?
    public var dateCreated: Int64?
    public var photo: ImageRef??

    public init(
        name: String? = nil, serialNumber: String?? = nil, valueInDollars: Int64? = nil, dateCreated: Int64? = nil,
        photo: ImageRef?? = nil
    ) {
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
        self.dateCreated = dateCreated
        self.photo = photo
    }

    /// Every field set to `item`'s values: a new item, an import, a restore from the trash.
    public init(settingAllOf item: Item) {
        self.init(
            name: item.name, serialNumber: .some(item.serialNumber), valueInDollars: item.valueInDollars,
            dateCreated: item.dateCreatedMilliseconds, photo: .some(item.image))
    }

    /// Only the fields whose values differ between `old` and `new`.
    public init(from old: Item, to new: Item) {
        self.init(
            name: old.name == new.name ? nil : new.name,
            serialNumber: old.serialNumber == new.serialNumber ? nil : .some(new.serialNumber),
            valueInDollars: old.valueInDollars == new.valueInDollars ? nil : new.valueInDollars,
            dateCreated: old.dateCreatedMilliseconds == new.dateCreatedMilliseconds ? nil : new.dateCreatedMilliseconds,
            photo: old.image == new.image ? nil : .some(new.image))
    }

    public var isEmpty: Bool {
        name == nil && serialNumber == nil && valueInDollars == nil && dateCreated == nil && photo == nil
    }
}

/// What one field of a conflict holds, whichever field it is.
public enum FieldContent: Hashable, Sendable {
    case text(String)
    case optionalText(String?)
    case integer(Int64)
    case photo(ImageRef?)
}

/// An open conflict: the value a field kept and one concurrent value that lost to it.
public struct FieldConflict: Hashable, Sendable {
    public var key: ItemKey
    public var field: ItemField
    public var kept: FieldContent
    public var keptVersion: Version
    public var losing: FieldContent
    public var losingVersion: Version

    public init(
        key: ItemKey, field: ItemField, kept: FieldContent, keptVersion: Version, losing: FieldContent,
        losingVersion: Version
    ) {
        self.key = key
        self.field = field
        self.kept = kept
        self.keptVersion = keptVersion
        self.losing = losing
        self.losingVersion = losingVersion
    }
}
