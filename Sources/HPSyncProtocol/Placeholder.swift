// Placeholder: filled in by the HPSyncProtocol work.
