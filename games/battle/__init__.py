"""The squad battle: rules in `rules`, the tick engine in `tick`, the orders and their reader
in `notation`, the seat's view in `view`, prompt drawing in `render`."""

from __future__ import annotations

from games.battle.notation import Orders, SquadOrder, squad_prefix
from games.battle.rules import Battle
from games.battle.state import BattleState, Soldier

__all__ = ["Battle", "BattleState", "Orders", "Soldier", "SquadOrder", "squad_prefix"]
