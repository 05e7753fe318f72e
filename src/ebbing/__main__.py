from ebbing.cli import main

main()
