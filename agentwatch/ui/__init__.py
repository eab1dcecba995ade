"""`agentwatch ui`: a local, read-only web view of the store for reviewing what an agent did.

`server` (the HTTP server: token, host check, headers, routes, read-only data access),
`pages` (the HTML, every recorded value escaped), `timeline` (a session as an SVG picture),
`static/app.css` (the only style the pages load). The pages carry no script.
"""
