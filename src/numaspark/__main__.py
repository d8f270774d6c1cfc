from numaspark.cli import main

main()
