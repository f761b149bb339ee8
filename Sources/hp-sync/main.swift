import HPSyncCLI

HPSyncCommand.runAndExit()
