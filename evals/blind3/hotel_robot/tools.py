"""Tools for Bellhop, our hotel room-service delivery robot.

A mobile base with a locking compartment. These stubs just report what the
robot would do; wire them to the base controller later.
"""

from typing import Annotated, Literal

from edgevox.agents import tool

Place = Literal["lobby", "elevator", "kitchen", "front_desk", "laundry", "pool"]
Sound = Literal["chime", "arrival", "thank_you", "excuse_me"]


@tool
def go_to_room(room: int) -> str:
    """Drive to a guest room and wait at its door.

    Args:
        room: The room number, between 101 and 1299 (floor first, e.g. 412 is floor 4).
    """
    return f"On my way to room {room}."


@tool
def go_to_place(place: Place) -> str:
    """Drive to a named place in the hotel.

    Args:
        place: Where to go: lobby, elevator, kitchen, front_desk, laundry or pool.
    """
    return f"Heading to the {place.replace('_', ' ')}."


@tool
def set_lid(opened: bool) -> str:
    """Open or lock the delivery compartment lid.

    Args:
        opened: True unlocks and opens the lid; False closes it and locks it.
    """
    return "Lid open." if opened else "Lid closed and locked."


@tool
def set_volume(percent: Annotated[int, "Speaker volume in percent, between 0 and 100."]) -> str:
    """Set the speaker volume."""
    return f"Volume set to {percent} percent."


@tool
def nudge(distance_m: float) -> str:
    """Move straight forward or backward a short distance.

    Args:
        distance_m: Distance in meters, between -2 and 2. Positive moves forward,
            negative backs up.
    """
    direction = "forward" if distance_m >= 0 else "back"
    return f"Moved {direction} {abs(distance_m):g} meters."


@tool
def play_sound(sound: Sound, times: int = 1) -> str:
    """Play a chime or a recorded message on the speaker.

    Args:
        sound: Which sound: chime, arrival ("your order has arrived"), thank_you or excuse_me.
        times: How many times to play it, 1 to 3.
    """
    return f"Played {sound.replace('_', ' ')} x{times}."


@tool
def get_battery() -> str:
    """Report the battery charge level, in percent."""
    return "Battery is at 64 percent."


@tool
def get_delivery_status() -> str:
    """Report the current delivery: where it is going and what is in the compartment."""
    return "Delivering two coffees to room 412, about one minute away."


@tool
def dock() -> str:
    """Return to the charging dock and start charging."""
    return "Going back to the dock to charge."


@tool
def cancel_delivery() -> str:
    """Cancel the current delivery and keep the items locked in the compartment."""
    return "Delivery cancelled; items stay locked inside."
