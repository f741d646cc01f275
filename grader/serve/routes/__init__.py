"""The service's routers, one per resource: sign-in, assessments, live state, results and evidence, the candidate."""
