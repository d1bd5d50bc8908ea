from memory_guard.cli import main

raise SystemExit(main())
