from codexwatch.cli import main

raise SystemExit(main())
