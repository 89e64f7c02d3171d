# Writes OUTPUT, a C++ header defining `const char NAME[]` with the text of
# INPUT, for tools that carry a helper script inside the binary.
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}" "// Generated from ${INPUT_NAME} by EmbedText.cmake.\n"
     "static const char ${NAME}[] = R\"tpcembed(${text})tpcembed\";\n")
