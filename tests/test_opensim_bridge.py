import pytest

from trajopt.model.io.opensim_reference import OpenSimTaskError, run_opensim_task, opensim_available


def test_bridge_reports_version(opensim_task):
    result = opensim_task("echo_version", {"value": 2.5})
    assert result["echo"] == 2.5
    assert result["version"].startswith("4.")


@pytest.mark.opensim
@pytest.mark.skipif(not opensim_available(), reason="opensim is not installed")
def test_bridge_failure_carries_task_name():
    with pytest.raises(OpenSimTaskError, match="no_such_task"):
        run_opensim_task("no_such_task", {})
