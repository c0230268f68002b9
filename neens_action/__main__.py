from neens_action.cli.main import main

main()
