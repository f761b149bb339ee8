import HPSyncCLI

HPSyncCommand.main()
