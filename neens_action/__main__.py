from neens_action.cli import main

main()
