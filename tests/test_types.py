import pytest

from worldmodel.types import Action


def test_action_round_trip_and_aliases():
    a = Action.from_json('{"type": "click", "x": 10, "y": 20}')
    assert a.type == "tap" and Action.from_json(a.to_json()) == a
    assert Action.from_dict({"action_type": "open_app", "app_name": "Gmail"}).app == "Gmail"
    assert Action("enter").key == "Enter"


@pytest.mark.parametrize(
    "d, msg",
    [
        ({"type": "fly"}, "action type 'fly'"),
        ({"type": "tap", "x": 1}, "needs x and y"),
        ({"type": "scroll", "x": 1, "y": 1, "direction": "sideways"}, "needs direction"),
        ({"type": "tap", "x": -3, "y": 1}, "x=-3"),
        ({"type": "type"}, "needs text"),
        ({"type": "tap", "x": 1, "y": 1, "z": 2}, "unknown field"),
        ({"x": 1}, "missing 'type'"),
    ],
)
def test_bad_actions_are_named(d, msg):
    with pytest.raises(ValueError, match=msg):
        Action.from_dict(d)


def test_scroll_direction_is_where_the_view_goes_not_the_finger():
    assert Action("scroll", x=1, y=1, direction="down").finger_direction == "up"
    assert Action("swipe", x=1, y=1, direction="down").finger_direction == "down"
