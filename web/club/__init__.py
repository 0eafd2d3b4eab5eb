"""The club page (`referee club serve URL`): every table live, the archive, the standings.

Its own Flask app on the same stack as a table's page (waitress, `web.security`, `web.sse`),
reading the club database through `referee.club.store.ClubStore`.
"""
