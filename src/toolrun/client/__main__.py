from toolrun.client.commands import standalone_app

standalone_app()()
