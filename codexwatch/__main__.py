from codexwatch.cli import entry

entry()
