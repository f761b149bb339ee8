import ArgumentParser

/// `hp-sync image`: groups the image subcommands.
struct ImageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image", abstract: "Set, get or remove an item's image.",
        subcommands: [Set.self, Get.self, Remove.self])
}
