# cmake -DEMBED_SCRIPT=cmake/embed.cmake -DOUTPUT=file.c -DTABLE=name
#       -DFILES=a.ptx|b.ptx -P embed_ptx.cmake
# Writes the table of built-in PTX at build time (CMakeLists-ptx.cmake).
include(${EMBED_SCRIPT})
string(REPLACE "|" ";" files "${FILES}")
gpukit_embed(${OUTPUT} ${TABLE} ${files})
# gpukit_embed leaves an unchanged file as it is; the build rule needs the
# output newer than the PTX it was made from, or it would run every time.
file(TOUCH ${OUTPUT})
