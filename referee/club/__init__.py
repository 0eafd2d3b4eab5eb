"""The club link: every referee also reports to one PostgreSQL database (issue 20).

`url` names and redacts the database, `schema` creates and migrates it, `sender` copies the
match log there in the background, `store` reads it for `referee club serve`, `referee matches
--club` and `referee export --club`.
"""
