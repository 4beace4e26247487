# results.gp: bench/results.png from the data bench/report.py writes.
# gnuplot -e "dir='DIR'; out='FILE.png'" bench/results.gp
set terminal pngcairo size 1400,1100 font "DejaVu Sans,10"
set output out
set termoption noenhanced
set multiplot layout 2,1 title "chute and its peers on this machine (median of the rounds; bars: min to max)"

set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set logscale y
set xtics rotate by -30 left nomirror
set key off
set title "end-to-end throughput, no-op jobs (log scale)"
set ylabel "jobs/s"
set palette defined (0 "#999999", 1 "#1f77b4", 2 "#ff7f0e")
set cbrange [0:2]
unset colorbox
set bmargin 7
stats dir."/e2e.dat" using 4 nooutput
set yrange [*:STATS_max * 4]
plot dir."/e2e.dat" using 0:2:5:xtic(1) with boxes lc palette, \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0, \
     "" using 0:($4 * 1.4):(sprintf("%.0f", $2)) with labels font ",9"

set title "latency: rename into new/ to handler start (log scale)"
set ylabel "ms"
set key top left
set style data histogram
set style histogram clustered gap 1
set boxwidth 0.9
set xtics norotate
set bmargin 3
stats dir."/lat.dat" using 3 nooutput
set yrange [*:STATS_max * 3]
plot dir."/lat.dat" using 2:xtic(1) title "p50" lc rgb "#1f77b4", \
     "" using 3 title "p99" lc rgb "#d62728"
unset multiplot
