import sys

from rankscope.cli.app import main

sys.exit(main())
