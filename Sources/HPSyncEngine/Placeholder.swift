// Placeholder: filled in by the HPSyncEngine work.
