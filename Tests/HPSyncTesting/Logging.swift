import Logging

/// A logger that drops everything: tests read results, not logs.
public let quietLogger = Logger(label: "hp-sync.tests") { _ in SwiftLogNoOpLogHandler() }
