"""Tools for Fern, our greenhouse rail robot.

Fern rides a rail between the plant benches (benches are numbered 1 to 12 from the
docking station), carries a spray boom with a small tank and a camera, and talks to
the greenhouse climate controller (roof vent, circulation fans, grow lights).
"""

from typing import Annotated, Literal

from edgevox.agents.tools import tool


@tool
def move_along_row(distance_m: float) -> str:
    """Move the robot along the rail between the benches.

    Args:
        distance_m: How far to move, in meters. Positive moves forward, away from the
            docking station; negative moves backward, toward the dock. Between -20 and 20.
    """
    direction = "forward" if distance_m >= 0 else "backward"
    return f"moving {direction} {abs(distance_m):g} m along the row"


@tool
def water_bench(bench: int, litres: float = 1.0) -> str:
    """Water the plants on one bench with the irrigation nozzle.

    Args:
        bench: Bench number, from 1 to 12.
        litres: How much water to give, in litres, between 0.1 and 5.
    """
    return f"watering bench {bench} with {litres:g} L"


@tool
def spray_plants(mix: Literal["water", "fertilizer", "fungicide"], seconds: float) -> str:
    """Spray the plants under the boom with water, fertilizer or fungicide.

    Args:
        mix: What to spray from the boom.
        seconds: How long to spray, in seconds, between 1 and 120.
    """
    return f"spraying {mix} for {seconds:g} s"


@tool
def set_vent(opening_percent: Annotated[float, "Vent opening in percent: 0 is fully closed, 100 is fully open."]) -> str:
    """Open or close the roof vent to a given position."""
    return f"roof vent at {opening_percent:g}%"


@tool
def set_fan(speed: Literal["off", "low", "medium", "high"]) -> str:
    """Set the speed of the circulation fans.

    Args:
        speed: Fan speed setting.
    """
    return f"fans set to {speed}"


@tool
def set_grow_lights(on: bool, brightness_percent: float = 100) -> str:
    """Switch the grow lights on or off, or dim them.

    Args:
        on: True to switch the lights on, False to switch them off.
        brightness_percent: Brightness when on, in percent, between 10 and 100.
    """
    if not on:
        return "grow lights off"
    return f"grow lights on at {brightness_percent:g}%"


@tool
def read_sensor(sensor: Literal["humidity", "temperature", "soil_moisture"]) -> str:
    """Read one of the greenhouse sensors and report the value.

    Args:
        sensor: Which sensor to read: air humidity (percent), air temperature
            (degrees Celsius) or soil moisture of the bench under the robot (percent).
    """
    values = {"humidity": "humidity is 68 percent",
              "temperature": "temperature is 24.5 degrees Celsius",
              "soil_moisture": "soil moisture is 41 percent"}
    return values[sensor]


@tool
def get_status() -> str:
    """Report the robot's position on the rail, battery level and spray tank level."""
    return "at bench 5, battery 76 percent, spray tank 40 percent full"


@tool
def take_photo(bench: int) -> str:
    """Take a photo of the plants on a bench with the camera.

    Args:
        bench: Bench number, from 1 to 12.
    """
    return f"photo of bench {bench} saved"


@tool
def drain_spray_tank() -> str:
    """Drain the spray tank completely into the floor drain. Everything in the tank is lost."""
    return "spray tank drained"
