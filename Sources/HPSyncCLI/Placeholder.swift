// Placeholder: filled in by the HPSyncCLI work.
