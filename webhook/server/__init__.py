"""The admission webhook's HTTPS server: flask app under gunicorn, TLS material, state loading, metrics."""
