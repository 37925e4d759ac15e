"""pytest glue (placeholder until the plugin issue lands): registers the marker only."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "accuracy(threshold=0.95, metric='cosine', per_op=None, ignore=(), modes=None): "
        "accuracy test against a golden dump",
    )
