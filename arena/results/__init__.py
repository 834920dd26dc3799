"""What the games mean: standings, ratings, the league's tables, reports and exports.

standings  W/D/L/NC, mean score, fallbacks, latency, tokens and cost
ratings    Elo in schedule order, Bradley-Terry with bootstrap intervals
tables     the league's tables, as summary.json and reports show them
history    the ratings over time: per match the Elo it moved, per session a snapshot
rating_tables  the store's tables of those (a part of the league's store)
export     the tables and the stored records as tidy rows, for JSON and CSV
fit        a rich table fitted to the console's width
formats    what `arena report` can show, and in which formats
report     `arena report`: tables, JSON or CSV, from a store handed in

The results sit below the league: the league's run, summary and stop rules
read them; they never import the league (a report is handed its store).
"""
