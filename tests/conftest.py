import pytest

from render import Renderer


@pytest.fixture(scope="session")
def renderer():
    r = Renderer(pool_size=2, timeout_s=4.0)
    yield r
    r.close()
