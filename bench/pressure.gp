# pressure.gp: bench/pressure.png from the data bench/report.py pressure writes (issue 24):
# one row of panels per cell, one column per figure, one line per system, the pressure shaded.
# gnuplot -e "dir='DIR'; out='FILE.png'" bench/pressure.gp
load dir."/vars.gp"
n = words(cells)
set terminal pngcairo size 2200, 380 * n + 80 font "DejaVu Sans,9"
set output out
set termoption noenhanced
set datafile missing "-"
set multiplot layout n, 5 title "the fleet under pressure, per second (shaded: the pressure; 2 worker processes x 2 slots; bench/fleet/pressure.sh)" \
	margins 0.04, 0.99, 0.04, 0.95 spacing 0.035, 0.06
set grid
set key top left font ",8" samplen 2
set style line 1 lc rgb "#1f77b4" lw 1.5
set style line 2 lc rgb "#ff7f0e" lw 1.2
set style line 3 lc rgb "#2ca02c" lw 1.2
set style line 4 lc rgb "#d62728" lw 1.2
set style line 5 lc rgb "#9467bd" lw 1.2
file(c, s) = dir."/".c.".".s.".dat"
do for [i = 1:n] {
	c = word(cells, i)
	t = value(sprintf("t%d", i))
	set object 1 rect from ps, graph 0 to pe, graph 1 behind fc rgb "#eeeeee" fs solid noborder
	unset logscale y
	set title t.": completion, handler starts/s"
	set yrange [0:*]
	plot for [j = 1:words(systems)] file(c, word(systems, j)) using 1:2 with lines ls j title word(systems, j)
	set logscale y
	set yrange [*:*]
	set title "claim latency p99 (solid) and p50 (dotted), ms, by submit second"
	plot for [j = 1:words(systems)] file(c, word(systems, j)) using 1:4 with lines ls j title word(systems, j), \
	     for [j = 1:words(systems)] file(c, word(systems, j)) using 1:3 with lines ls j dt 3 notitle
	unset logscale y
	set yrange [0:*]
	set title "queue depth (unfinished jobs)"
	plot for [j = 1:words(systems)] file(c, word(systems, j)) using 1:5 with lines ls j title word(systems, j)
	set title "dead tuples (n_dead_tup, the system's schema)"
	plot for [j = 1:words(systems)] file(c, word(systems, j)) using 1:6 with lines ls j title word(systems, j)
	set title "tables + indexes, MiB"
	plot for [j = 1:words(systems)] file(c, word(systems, j)) using 1:7 with lines ls j title word(systems, j)
}
unset multiplot
