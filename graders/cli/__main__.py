"""``python -m graders.cli``: the ``vecgrade`` command without its entry point's fast exit."""
if __name__ == "__main__":  # importing the module (the docs walk every module) runs nothing
    from graders.entry import lighter_imports

    lighter_imports()
    from graders.cli import app

    app()
